"""The orbital robot, an arm on a free-floating spacecraft ([Mishra2023] Sec. V-A): its controller and
the spacecraft mount."""
