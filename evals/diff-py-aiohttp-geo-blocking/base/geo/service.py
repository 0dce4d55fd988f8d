"""Store-locator API: nearest stores for a coordinate."""
import asyncio
import math
import os

import aiohttp
from aiohttp import web

STORES_URL = os.environ.get("STORES_URL", "http://stores.internal/api/stores")


def distance_km(lat1, lon1, lat2, lon2):
    r = 6371.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


async def fetch_stores(session: aiohttp.ClientSession):
    for attempt in range(3):
        try:
            async with session.get(STORES_URL, timeout=aiohttp.ClientTimeout(total=5)) as resp:
                resp.raise_for_status()
                return await resp.json()
        except aiohttp.ClientError:
            if attempt == 2:
                raise
            await asyncio.sleep(0.5 * (attempt + 1))


async def nearest(request: web.Request) -> web.Response:
    try:
        lat = float(request.query["lat"])
        lon = float(request.query["lon"])
    except (KeyError, ValueError):
        raise web.HTTPBadRequest(text="lat and lon are required")
    stores = await fetch_stores(request.app["session"])
    ranked = sorted(stores, key=lambda s: distance_km(lat, lon, s["lat"], s["lon"]))
    return web.json_response(ranked[:5])


async def on_startup(app: web.Application):
    app["session"] = aiohttp.ClientSession()


async def on_cleanup(app: web.Application):
    await app["session"].close()


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/stores/nearest", nearest)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), port=8080)
