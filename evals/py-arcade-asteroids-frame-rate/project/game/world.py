"""Asteroid field: ships, rocks and the wave generator for the arcade mode."""

import random
from dataclasses import dataclass, field

WAVE_SIZES = (4, 6, 9, 12)
FIELD_WIDTH = 1280
FIELD_HEIGHT = 720


@dataclass
class Ship:
    x: float
    y: float
    vx: float = 0.0
    vy: float = 0.0
    thrust: float = 220.0  # pixels per second squared

    def update(self, dt, pressed):
        if "up" in pressed:
            self.vy -= self.thrust * dt
        if "down" in pressed:
            self.vy += self.thrust * dt
        self.x = (self.x + self.vx * dt) % FIELD_WIDTH
        self.y = (self.y + self.vy * dt) % FIELD_HEIGHT


@dataclass
class Rock:
    x: float
    y: float
    heading: float
    size: int = 3

    def update(self, pressed=()):
        self.x += 2.5
        self.y += self.heading
        self.x %= FIELD_WIDTH
        self.y %= FIELD_HEIGHT


@dataclass
class Wave:
    number: int
    rocks: list = field(default_factory=list)


def spawn_wave(number):
    """Rocks for wave `number`; replays and the daily challenge need the same layout every time."""
    count = WAVE_SIZES[min(number, len(WAVE_SIZES) - 1)]
    rocks = []
    for _ in range(count):
        x = random.uniform(0, FIELD_WIDTH)
        y = random.uniform(0, FIELD_HEIGHT)
        rocks.append(Rock(x, y, heading=random.uniform(-1.5, 1.5)))
    return Wave(number, rocks)


def spawn_debris(x, y, rng):
    """Cosmetic sparks after a hit; `rng` is the renderer's own generator."""
    return [(x + rng.uniform(-8, 8), y + rng.uniform(-8, 8)) for _ in range(6)]
