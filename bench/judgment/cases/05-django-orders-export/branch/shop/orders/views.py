"""Order pages."""

import csv

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt

from .models import Order


@login_required
def order_detail(request, order_id):
    """One of the customer's orders."""
    order = get_object_or_404(Order, pk=order_id, customer=request.user)
    return render(request, "orders/detail.html", {"order": order})


@login_required
def order_search(request):
    """The customer's orders whose note mentions the search term."""
    term = request.GET.get("q", "")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, created, status FROM orders_order WHERE customer_id = {request.user.id} "
            f"AND note ILIKE '%{term}%' ORDER BY created DESC"
        )
        rows = cursor.fetchall()
    header = mark_safe(f"<h2>Results for {term}</h2>")
    return render(request, "orders/search.html", {"rows": rows, "header": header})


@csrf_exempt
@login_required
def cancel_order(request, order_id):
    """Cancel an open order (called from the order page's cancel button)."""
    order = get_object_or_404(Order, pk=order_id)
    order.status = "cancelled"
    order.save()
    return JsonResponse({"id": order.id, "status": order.status})


@login_required
def export_orders(request):
    """All of the customer's orders with their lines, as CSV."""
    response = HttpResponse(content_type="text/csv")
    writer = csv.writer(response)
    for order in Order.objects.filter(customer=request.user):
        for line in order.lines.all():
            writer.writerow([order.id, order.created, line.sku, line.quantity, line.unit_price])
    return response
