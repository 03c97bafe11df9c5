"""`make bench`: every benchmark of the package, one after the other; JSON in out/bench/."""
import engine
import hopper

if __name__ == "__main__":
    print("== engine: seed 002 REL terms and curvature vs Pinocchio (orbital robot)")
    result = engine.run()
    engine.report(result)
    engine.save(result, "engine")
    print("== hopper: seed 003 controller step and simulation loop (revolute hopper)")
    result = hopper.run_bench()
    hopper.report(result)
    hopper.save(result, "hopper")
