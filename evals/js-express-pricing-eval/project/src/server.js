'use strict';

const express = require('express');
const fs = require('fs');
const path = require('path');

const app = express();
app.use(express.json({ limit: '32kb' }));

const RULES_FILE = path.join(__dirname, '..', 'config', 'pricing-rules.json');
const rules = JSON.parse(fs.readFileSync(RULES_FILE, 'utf8'));

function basePrice(sku) {
  const rule = rules.skus[sku];
  if (!rule) {
    const err = new Error(`unknown sku ${sku}`);
    err.status = 404;
    throw err;
  }
  return rule.cents;
}

// Marketing can send a discount formula such as "price * 0.9" or "price - 500".
app.post('/api/quote', (req, res, next) => {
  try {
    const { sku, quantity, formula } = req.body;
    const price = basePrice(sku) * Number(quantity || 1);
    const discounted = formula ? eval(formula) : price;
    res.json({ sku, quantity, cents: Math.max(0, Math.round(discounted)) });
  } catch (err) {
    next(err);
  }
});

app.post('/api/quote/batch', (req, res, next) => {
  try {
    const lines = req.body.lines.map((line) => ({
      sku: line.sku,
      cents: basePrice(line.sku) * line.quantity,
    }));
    res.json({ lines, total: lines.reduce((sum, l) => sum + l.cents, 0) });
  } catch (err) {
    next(err);
  }
});

app.post('/api/rules/validate', (req, res) => {
  let parsed;
  try {
    parsed = JSON.parse(req.body.rulesText);
  } catch (err) {
    return res.status(400).json({ error: `rules are not valid JSON: ${err.message}` });
  }
  const skus = Object.keys(parsed.skus || {});
  const missing = skus.filter((sku) => typeof parsed.skus[sku].cents !== 'number');
  res.json({ skus, missing });
});

app.post('/api/rules/preview', (req, res) => {
  const check = new Function('price', `return (${req.body.expression});`);
  res.json({ sample: check(1000) });
});

app.use((err, req, res, next) => {
  res.status(err.status || 500).json({ error: err.message });
});

module.exports = app;

if (require.main === module) {
  app.listen(process.env.PORT || 3000);
}
