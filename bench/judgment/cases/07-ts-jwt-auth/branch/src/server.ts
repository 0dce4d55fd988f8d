import cors from "cors";
import express from "express";

import { requireAuth } from "./auth/jwt.js";
import { notesOf } from "./db.js";

const app = express();
app.use(express.json());
app.use(
  cors({
    origin: (origin, callback) => callback(null, origin ?? true),
    credentials: true,
  }),
);

app.get("/healthz", (_req, res) => {
  res.send("ok");
});

app.get("/users/:user/notes", requireAuth, async (req, res) => {
  res.json(await notesOf(req.params.user));
});

app.listen(Number(process.env.PORT ?? 8080));
