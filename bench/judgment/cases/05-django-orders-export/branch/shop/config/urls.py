"""URL routes."""

from django.urls import path

from shop.orders import views

urlpatterns = [
    path("orders/<int:order_id>/", views.order_detail, name="order-detail"),
    path("orders/<int:order_id>/cancel/", views.cancel_order, name="order-cancel"),
    path("orders/search/", views.order_search, name="order-search"),
    path("orders/export.csv", views.export_orders, name="order-export"),
]
