"""URL routes."""

from django.urls import path

from shop.orders import views

urlpatterns = [
    path("orders/<int:order_id>/", views.order_detail, name="order-detail"),
]
