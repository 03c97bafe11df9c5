"""`make bench`: every benchmark of the package, one after the other; JSON in out/bench/."""
import ccf
import engine

if __name__ == "__main__":
    print("== engine: seed 002 REL terms and curvature vs Pinocchio (orbital robot)")
    result = engine.run()
    engine.report(result)
    engine.save(result, "engine")

    print("\n== ccf: Algorithm 1 (seed 002) on the LWR 4+, Theorem 2 vs central differences")
    result = ccf.run()
    ccf.report(result)
    engine.save(result, "ccf")
