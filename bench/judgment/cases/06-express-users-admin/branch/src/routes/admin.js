'use strict'

const express = require('express')
const { exec } = require('node:child_process')

const router = express.Router()

/**
 * GET /admin/diagnostics/ping?host= - can the API reach a host?
 * Used by the on-call runbook.
 */
router.get('/diagnostics/ping', function (req, res) {
  const host = req.query.host
  exec('ping -c 3 ' + host, { timeout: 10000 }, function (err, stdout, stderr) {
    res.type('text/plain').send(err ? stderr : stdout)
  })
})

module.exports = router
