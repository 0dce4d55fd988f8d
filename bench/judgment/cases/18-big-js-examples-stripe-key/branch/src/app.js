'use strict'

const express = require('express')

const app = module.exports = express()
app.use(express.json())
app.use('/billing', require('./billing/stripe'))

app.get('/healthz', function (req, res) {
  res.send('ok')
})

if (require.main === module) {
  app.listen(process.env.PORT || 3000)
}
