"""Simulated hardware: the MuJoCo plants (the orbital robot, the hoppers), sensor models and joint friction.

What a controller may read comes out of here as measurements; nothing here imports a controller.
"""
