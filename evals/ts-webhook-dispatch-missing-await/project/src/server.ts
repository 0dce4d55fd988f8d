import express from "express";

import { deliver, deliverAll, Delivery } from "./dispatch.js";

const app = express();
app.use(express.json());

app.post("/deliveries", async (req, res) => {
  const delivery = req.body as Delivery;
  const ok = await deliver(delivery);
  res.status(ok ? 202 : 404).json({ ok });
});

app.post("/deliveries/batch", async (req, res) => {
  const deliveries = req.body as Delivery[];
  const delivered = deliverAll(deliveries);
  res.status(202).json({ delivered });
});

app.listen(Number(process.env.PORT ?? 3000));
