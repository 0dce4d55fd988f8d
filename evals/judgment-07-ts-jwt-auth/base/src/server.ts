import express from "express";

import { notesOf } from "./db.js";

const app = express();
app.use(express.json());

app.get("/healthz", (_req, res) => {
  res.send("ok");
});

app.get("/users/:user/notes", async (req, res) => {
  res.json(await notesOf(req.params.user));
});

app.listen(Number(process.env.PORT ?? 8080));
