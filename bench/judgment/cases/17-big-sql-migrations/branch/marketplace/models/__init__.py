"""SQLAlchemy models of the marketplace tables (one module per table)."""

from .audit_log import AuditLog
from .base import Base
from .cart_items import CartItem
from .carts import Cart
from .categories import Category
from .coupon_redemptions import CouponRedemption
from .coupons import Coupon
from .currency_rates import CurrencyRate
from .disputes import Dispute
from .export_jobs import ExportJob
from .feature_flags import FeatureFlag
from .gift_card_uses import GiftCardUs
from .gift_cards import GiftCard
from .invoice_lines import InvoiceLine
from .invoices import Invoice
from .listing_attributes import ListingAttribute
from .listing_images import ListingImage
from .listings import Listing
from .loyalty_accounts import LoyaltyAccount
from .loyalty_transactions import LoyaltyTransaction
from .notifications import Notification
from .payments import Payment
from .payouts import Payout
from .price_history import PriceHistory
from .refunds import Refund
from .return_items import ReturnItem
from .return_requests import ReturnRequest
from .reviews import Review
from .search_synonyms import SearchSynonym
from .seller_documents import SellerDocument
from .seller_ratings import SellerRating
from .sellers import Seller
from .shipments import Shipment
from .shipping_zones import ShippingZone
from .stock_movements import StockMovement
from .support_messages import SupportMessage
from .support_tickets import SupportTicket
from .tax_rates import TaxRate
from .tracking_events import TrackingEvent
from .warehouses import Warehous
from .webhook_deliveries import WebhookDelivery
from .webhook_endpoints import WebhookEndpoint
from .wishlist_items import WishlistItem
from .wishlists import Wishlist

__all__ = [
    "AuditLog",
    "Base",
    "Cart",
    "CartItem",
    "Category",
    "Coupon",
    "CouponRedemption",
    "CurrencyRate",
    "Dispute",
    "ExportJob",
    "FeatureFlag",
    "GiftCard",
    "GiftCardUs",
    "Invoice",
    "InvoiceLine",
    "Listing",
    "ListingAttribute",
    "ListingImage",
    "LoyaltyAccount",
    "LoyaltyTransaction",
    "Notification",
    "Payment",
    "Payout",
    "PriceHistory",
    "Refund",
    "ReturnItem",
    "ReturnRequest",
    "Review",
    "SearchSynonym",
    "Seller",
    "SellerDocument",
    "SellerRating",
    "Shipment",
    "ShippingZone",
    "StockMovement",
    "SupportMessage",
    "SupportTicket",
    "TaxRate",
    "TrackingEvent",
    "Warehous",
    "WebhookDelivery",
    "WebhookEndpoint",
    "Wishlist",
    "WishlistItem",
]
