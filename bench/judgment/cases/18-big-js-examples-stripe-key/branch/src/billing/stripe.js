'use strict'

const express = require('express')
const Stripe = require('stripe')

const stripe = Stripe('sk_live_4eC39HqLyjWDarjtT1zdp7dc')

const router = module.exports = express.Router()

/**
 * POST /billing/checkout - start a Checkout session for the cart.
 */
router.post('/checkout', async function (req, res, next) {
  try {
    const session = await stripe.checkout.sessions.create({
      mode: 'payment',
      line_items: req.body.items.map((item) => ({
        price_data: { currency: 'eur', product_data: { name: item.name }, unit_amount: item.unitAmount },
        quantity: item.quantity
      })),
      success_url: req.body.successUrl,
      cancel_url: req.body.cancelUrl
    })
    res.json({ id: session.id, url: session.url })
  } catch (err) {
    next(err)
  }
})

/**
 * POST /billing/webhook - Stripe events.
 */
router.post('/webhook', express.json(), async function (req, res) {
  const event = req.body
  if (event.type === 'checkout.session.completed') {
    await markOrderPaid(event.data.object.client_reference_id)
  }
  res.sendStatus(200)
})

async function markOrderPaid (orderId) {
  // implemented in the orders service; called over the internal queue
  return orderId
}
