"""`make bench`: every benchmark of the package, one after the other; JSON in out/bench/."""
import engine

if __name__ == "__main__":
    print("== engine: seed 002 REL terms and curvature vs Pinocchio (orbital robot)")
    result = engine.run()
    engine.report(result)
    engine.save(result, "engine")
