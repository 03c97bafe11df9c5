"""`make bench`: every benchmark of the package, one after the other; JSON in out/bench/."""
import engine
import orbital

if __name__ == "__main__":
    for name, module, title in [
            ("engine", engine, "seed 002 REL terms and curvature vs Pinocchio (orbital robot)"),
            ("orbital", orbital, "orbital closed loop: controller step and the 30 s scenario")]:
        print(f"== {name}: {title}")
        result = module.run()
        module.report(result)
        engine.save(result, name)
