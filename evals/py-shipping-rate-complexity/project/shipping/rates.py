"""Shipping rate calculation for checkout."""
from decimal import ROUND_HALF_UP, Decimal

ZONE_BY_COUNTRY = {
    "DE": 1, "AT": 1, "NL": 1, "BE": 1, "LU": 1,
    "FR": 2, "IT": 2, "ES": 2, "PT": 2, "DK": 2,
    "SE": 3, "FI": 3, "NO": 3, "CH": 3, "GB": 3,
    "US": 4, "CA": 4,
    "AU": 5, "NZ": 5, "JP": 5,
}

BASE_RATE_BY_ZONE = {
    1: Decimal("4.90"),
    2: Decimal("8.90"),
    3: Decimal("12.90"),
    4: Decimal("24.00"),
    5: Decimal("32.00"),
}

CARRIER_SURCHARGE = {
    "standard": Decimal("0.00"),
    "express": Decimal("9.00"),
    "overnight": Decimal("19.00"),
}


def zone_for(country: str) -> int:
    return ZONE_BY_COUNTRY.get(country.upper(), 5)


def round_money(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def calculate_shipping(order, customer, carrier, promo=None):
    total = Decimal("0")
    zone = zone_for(order["country"])
    if carrier not in CARRIER_SURCHARGE:
        raise ValueError(f"unknown carrier {carrier}")
    if order["items"]:
        weight = Decimal("0")
        for item in order["items"]:
            if item.get("digital"):
                continue
            if item.get("weight_kg") is None:
                weight += Decimal("1") * item["quantity"]
            else:
                weight += Decimal(str(item["weight_kg"])) * item["quantity"]
        if weight == 0:
            return Decimal("0.00")
        total = BASE_RATE_BY_ZONE[zone]
        if weight > 2:
            if weight > 10:
                if weight > 30:
                    if carrier == "overnight":
                        raise ValueError("overnight is limited to 30 kg")
                    else:
                        total += (weight - 30) * Decimal("0.80") + Decimal("18.00")
                else:
                    total += (weight - 10) * Decimal("0.60") + Decimal("6.00")
            else:
                total += (weight - 2) * Decimal("0.75")
        total += CARRIER_SURCHARGE[carrier]
        if zone >= 4:
            for item in order["items"]:
                if item.get("battery"):
                    if carrier == "standard":
                        total += Decimal("5.00")
                    elif carrier == "express":
                        total += Decimal("8.00")
                    else:
                        raise ValueError("batteries cannot ship overnight overseas")
                    break
        if customer.get("tier") == "gold" or customer.get("tier") == "platinum":
            if zone <= 2:
                if carrier == "standard":
                    total = Decimal("0")
                else:
                    total -= Decimal("4.90")
            elif zone == 3:
                if customer.get("tier") == "platinum":
                    total = total / 2
                else:
                    total -= Decimal("4.90")
            else:
                if customer.get("tier") == "platinum" and order["subtotal"] > 200:
                    total -= Decimal("10.00")
        elif order["subtotal"] >= 75 and zone == 1 and carrier == "standard":
            total = Decimal("0")
        if promo:
            if promo.get("type") == "free_shipping":
                if promo.get("zones") is None or zone in promo["zones"]:
                    if carrier == "standard" or promo.get("all_carriers"):
                        total = Decimal("0")
            elif promo.get("type") == "percent_off_shipping":
                total = total * (100 - promo["percent"]) / 100
            elif promo.get("type") == "flat_off_shipping":
                total -= Decimal(str(promo["amount"]))
        if total < 0:
            total = Decimal("0")
    return round_money(total)


def describe_zone(country: str) -> str:
    names = {1: "Domestic & Benelux", 2: "EU", 3: "Nordics, CH, UK", 4: "North America", 5: "Rest of world"}
    return names[zone_for(country)]
