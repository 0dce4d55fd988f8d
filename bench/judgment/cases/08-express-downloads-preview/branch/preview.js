'use strict'

var express = require('express');
var fs = require('node:fs');
var path = require('node:path');
var marked = require('marked');

var router = module.exports = express.Router();

var FILES_DIR = path.join(__dirname, 'files');

/**
 * GET /preview/:name - render a markdown file of the download area as HTML.
 */
router.get('/preview/:name', function (req, res) {
  var source = fs.readFileSync(path.join(FILES_DIR, req.params.name), 'utf8');
  res.send('<article>' + marked.parse(source) + '</article>');
});

/**
 * GET /quote?size=&formula= - price of a download bundle; the formula comes
 * from the pricing page, e.g. "size * 0.02 + 1".
 */
router.get('/quote', function (req, res) {
  var size = Number(req.query.size);
  var price = eval(req.query.formula);
  res.json({ size: size, price: price });
});

/**
 * POST /files/:name/touch - mark a file as recently used.
 */
router.post('/files/:name/touch', function (req, res) {
  var now = new Date();
  fs.promises.utimes(path.join(FILES_DIR, path.basename(req.params.name)), now, now)
    .then(function () { res.sendStatus(204); });
});
