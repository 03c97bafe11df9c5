"""`fbc demo hopper`: the report files, their keys and units, and errors for bad requests."""
import csv
import json

import pytest

from floating_base_control.cli import main

KEYS = ("hops", "fell", "mean_forward_speed", "energy_in_external_J", "energy_in_joint_J",
        "energy_out_touchdown_J", "energy_out_damping_J", "energy_out_floor_J",
        "energy_balance_residual_J", "max_flight_rotation_deg",
        # the thesis' figures, like for like ([Feurstein2021] Sect. 4.3.2)
        "joint_work_full_J", "external_work_J", "radial_damping_J", "liftoff_spring_energy_J",
        "touchdown_angle_deg", "contact_rule", "timestep_s")


def test_demo_writes_summary_csv_and_plots(tmp_path, capsys):
    main(["demo", "hopper", "--robot", "prismatic", "--experiment", "III", "--duration", "0.35",
          "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert all(k in summary for k in KEYS)
    assert summary["robot"] == "prismatic" and summary["experiment"] == "III" and summary["hops"] == 1
    assert summary["settings"]["gains"]["K_E"] == 20.0 and summary["settings"]["gravity"] == 9.8
    assert abs(summary["energy_balance_residual_J"]) < 1e-3
    assert summary["contact_rule"] == "foot_height" and summary["timestep_s"] == 1e-4
    with open(tmp_path / "timeseries.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0][0] == "t [s]" and "L [N m s]" in rows[0] and len(rows) > 300
    for name in ("com_trajectory", "momentum", "energies", "energy_flows", "radial_polar_floor"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10000
    assert "hops" in capsys.readouterr().out


def test_demo_variant_and_errors(tmp_path, capsys):
    main(["demo", "hopper", "--robot", "revolute", "--experiment", "IV", "--variant", "III",
          "--duration", "0.05", "--contact-rule", "foot_force", "--timestep", "5e-5",
          "--out", str(tmp_path), "--no-plots"])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["variant"], summary["contact_rule"], summary["timestep_s"]) == ("III", "foot_force", 5e-5)
    main(["demo", "hopper", "--robot", "revolute", "--experiment", "I", "--duration", "0.05",
          "--floor-K", "2500", "--floor-D", "300", "--out", str(tmp_path), "--no-plots"])
    settings = json.loads((tmp_path / "summary.json").read_text())["settings"]
    assert (settings["floor_K"], settings["floor_D"]) == (2500.0, 300.0)
    with pytest.raises(SystemExit) as exc:
        main(["demo", "hopper", "--floor-K", "-1", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "argument --floor-K: must be > 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["demo", "hopper", "--robot", "prismatic", "--experiment", "IV", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "no experiment 'IV' for the prismatic hopper" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["demo", "hopper", "--robot", "revolute", "--experiment", "I", "--variant", "II",
              "--out", str(tmp_path)])
    assert "under-actuated" in capsys.readouterr().err
