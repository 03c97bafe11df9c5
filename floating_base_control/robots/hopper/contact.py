"""Stance or flight for the hopping controller ([Feurstein2021] sect. 4.1.4): from the foot height the
controller estimates (default) or from a foot force sensor."""
import math

#: Stance/flight rules (``HopperGains.contact_rule``): the foot at or below the floor, its height
#: from odometry and encoders (default); or the foot force sensor with hysteresis and debounce.
CONTACT_RULES = ("foot_height", "foot_force")


class ContactDetector:
    """Stance or flight, by the rule ``gains.contact_rule``.

    ``"foot_height"`` (default): stance while the foot is at or below the floor (height 0 of
    the odometry frame), the foot height estimated from odometry and encoders (base pose and
    the foot's forward kinematics).  This is the thesis' floor flag ``o^y_if <= 0`` (Sect.
    4.1.4), the rule under which the controller's phases are the floor's: it reproduces the
    thesis' Exp VI energy figures (docs/explanation/hopper.md).  A sampled controller holds its command
    for ``hold`` seconds (its period): stance then also needs the foot, moving at its
    estimated vertical rate, to be on the floor still at the end of the hold.  Otherwise the
    stance command (the polar spring's base torque) would act on a hopper in the air for up to
    a period after lift-off, an external torque that turns its flight: at 1 kHz this alone
    makes the Exp VI gait diverge (docs/explanation/hopper.md, "Control rate").  ``hold = 0``: the flag
    as it is (a continuous controller).

    ``"foot_force"``: from a foot force sensor, with hysteresis and a minimum phase time.
    Stance begins when the force exceeds ``touchdown_force`` and ends when it falls below
    ``liftoff_force``; a phase that began less than ``min_phase_time`` ago does not switch.
    On the viscoelastic floor it holds "flight" for ``min_phase_time`` while the light foot,
    lifted by the stance controller just after the impact, is back on the floor.
    """

    def __init__(self, gains, stance=False, hold=0.0):
        self.gains = gains
        self.stance = stance
        self.hold = hold
        self.since = -math.inf

    def update(self, t, force, foot_height, foot_height_rate=0.0):
        """Contact state at time ``t`` (s) for the measured foot force (N), the estimated
        foot height above the floor (m) and its rate (m/s)."""
        g = self.gains
        if g.contact_rule == "foot_height":
            stance = foot_height <= 0.0 and foot_height + self.hold * foot_height_rate <= 0.0
            if stance != self.stance:
                self.stance, self.since = stance, t
        elif t - self.since >= g.min_phase_time:
            if not self.stance and force > g.touchdown_force:
                self.stance, self.since = True, t
            elif self.stance and force < g.liftoff_force:
                self.stance, self.since = False, t
        return self.stance
