'use strict'

const express = require('express')
const logger = require('morgan')
const users = require('./routes/users')

const app = module.exports = express()

app.use(logger('combined'))
app.use(express.json())
app.use('/users', users)

app.use(function (err, req, res, next) {
  console.error(err)
  res.status(500).json({ error: 'internal error' })
})

if (require.main === module) {
  app.listen(process.env.PORT || 3000)
}
