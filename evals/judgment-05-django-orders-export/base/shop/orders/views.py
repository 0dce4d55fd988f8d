"""Order pages."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from .models import Order


@login_required
def order_detail(request, order_id):
    """One of the customer's orders."""
    order = get_object_or_404(Order, pk=order_id, customer=request.user)
    return render(request, "orders/detail.html", {"order": order})
