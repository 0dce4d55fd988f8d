'use strict'

const mysql = require('mysql2/promise')

const pool = mysql.createPool({
  host: process.env.DB_HOST || 'localhost',
  user: process.env.DB_USER || 'users_api',
  password: process.env.DB_PASSWORD,
  database: process.env.DB_NAME || 'users',
  connectionLimit: 10
})

module.exports = pool
