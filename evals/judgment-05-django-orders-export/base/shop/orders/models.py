"""Orders and their lines."""

from django.conf import settings
from django.db import models


class Order(models.Model):
    """A customer's order."""

    customer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    created = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=20, default="open")
    note = models.TextField(blank=True)


class OrderLine(models.Model):
    """One product in an order."""

    order = models.ForeignKey(Order, related_name="lines", on_delete=models.CASCADE)
    sku = models.CharField(max_length=32)
    quantity = models.PositiveIntegerField()
    unit_price = models.DecimalField(max_digits=10, decimal_places=2)
