"use strict";

const fs = require("fs");
const fsp = require("fs/promises");
const path = require("path");
const express = require("express");
const { marked } = require("marked");

const CONTENT_DIR = path.join(__dirname, "..", "content");
const SLUG_RE = /^[a-z0-9-]+$/;

// Loaded once when the process starts.
const layout = fs.readFileSync(path.join(__dirname, "layout.html"), "utf8");
const nav = JSON.parse(fs.readFileSync(path.join(CONTENT_DIR, "nav.json"), "utf8"));

const app = express();

function render(title, body) {
  return layout.replace("{{title}}", title).replace("{{body}}", body);
}

app.get("/docs/:slug", (req, res) => {
  const { slug } = req.params;
  if (!SLUG_RE.test(slug)) {
    return res.status(404).send("Not found");
  }
  const file = path.join(CONTENT_DIR, `${slug}.md`);
  if (!fs.existsSync(file)) {
    return res.status(404).send("Not found");
  }
  const markdown = fs.readFileSync(file, "utf8");
  const entry = nav.find((n) => n.slug === slug);
  res.send(render(entry ? entry.title : slug, marked.parse(markdown)));
});

app.get("/changelog", async (req, res, next) => {
  try {
    const markdown = await fsp.readFile(path.join(CONTENT_DIR, "CHANGELOG.md"), "utf8");
    res.send(render("Changelog", marked.parse(markdown)));
  } catch (err) {
    next(err);
  }
});

app.get("/search", (req, res) => {
  const q = String(req.query.q || "").toLowerCase();
  if (q.length < 3) {
    return res.json([]);
  }
  const hits = [];
  for (const entry of nav) {
    const text = fs.readFileSync(path.join(CONTENT_DIR, `${entry.slug}.md`), "utf8");
    if (text.toLowerCase().includes(q)) {
      hits.push({ slug: entry.slug, title: entry.title });
    }
  }
  res.json(hits);
});

app.get("/nav", (req, res) => {
  res.json(nav);
});

app.listen(Number(process.env.PORT || 8080));
