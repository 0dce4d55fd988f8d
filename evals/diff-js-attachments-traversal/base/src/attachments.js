'use strict';

const crypto = require('crypto');
const fs = require('fs/promises');
const path = require('path');
const express = require('express');

const UPLOAD_DIR = path.resolve(process.env.UPLOAD_DIR || './uploads');
const MAX_BYTES = 5 * 1024 * 1024;

function createRouter(db) {
  const router = express.Router();

  router.post(
    '/attachments',
    express.raw({ type: 'application/octet-stream', limit: MAX_BYTES }),
    async (req, res, next) => {
      try {
        const original = path.basename(String(req.get('x-filename') || 'upload.bin'));
        const id = crypto.randomBytes(16).toString('hex');
        await fs.writeFile(path.join(UPLOAD_DIR, id), req.body);
        await db.query(
          'INSERT INTO attachments (id, original_name, size, owner_id) VALUES ($1, $2, $3, $4)',
          [id, original, req.body.length, req.user.id],
        );
        res.status(201).json({ id, name: original });
      } catch (err) {
        next(err);
      }
    },
  );

  router.get('/attachments/:id', async (req, res, next) => {
    try {
      const { rows } = await db.query(
        'SELECT id, original_name FROM attachments WHERE id = $1 AND owner_id = $2',
        [req.params.id, req.user.id],
      );
      if (rows.length === 0) return res.status(404).end();
      res.download(path.join(UPLOAD_DIR, rows[0].id), rows[0].original_name);
    } catch (err) {
      next(err);
    }
  });

  return router;
}

module.exports = { createRouter, UPLOAD_DIR };
