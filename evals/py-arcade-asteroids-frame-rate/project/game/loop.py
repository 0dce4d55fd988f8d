"""The arcade mode's main loop: fixed 60 Hz simulation, rendering as fast as the display allows."""

import time

from game.world import Ship, spawn_wave

STEP = 1 / 60


def run(display, input_source, seconds=None):
    ship = Ship(640.0, 360.0)
    wave = spawn_wave(0)
    previous = time.perf_counter()
    lag = 0.0
    started = previous
    while seconds is None or time.perf_counter() - started < seconds:
        now = time.perf_counter()
        lag += now - previous
        previous = now
        pressed = input_source.pressed()
        while lag >= STEP:
            ship.update(STEP, pressed)
            lag -= STEP
        for rock in wave.rocks:  # once per rendered frame
            rock.update(pressed)
        display.draw(ship, wave.rocks)
