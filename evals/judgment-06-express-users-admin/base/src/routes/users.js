'use strict'

const express = require('express')
const db = require('../db')

const router = express.Router()

/**
 * GET /users/:id - one user.
 */
router.get('/:id', async function (req, res, next) {
  try {
    const [rows] = await db.execute('SELECT id, name, email FROM users WHERE id = ?', [req.params.id])
    if (rows.length === 0) return res.status(404).json({ error: 'not found' })
    res.json(rows[0])
  } catch (err) {
    next(err)
  }
})

module.exports = router
