"""A video of a run: MuJoCo renders the robot of a URDF offscreen at the logged states, a camera following its
centre of mass, and imageio's ffmpeg writes the frames to an MP4.

Offscreen rendering needs an OpenGL context without a window: ``MUJOCO_GL`` chooses it (``egl``: a GPU's,
or Mesa's software EGL; ``osmesa``; ``glfw`` needs a display); unset, it is ``egl`` without a ``DISPLAY``,
with ``osmesa`` as the fallback.  The robot is drawn from the URDF's visual and collision geometry (meshes
when MuJoCo can load them, else the primitives), and bodies without any get a stick figure (a capsule to
each child), so any robot shows.  Frames are the logged states nearest each frame's time (no interpolation).
"""
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from floating_base_control.conventions import quat_wxyz_to_matrix
from floating_base_control.model import FloatingBaseModel
from floating_base_control.sim.plant import MujocoPlant, spec_from_urdf_string
from floating_base_control.validation import ModelError

BASE_RGBA = (0.85, 0.65, 0.25, 1.0)       #: the floating base (a spacecraft's gold foil, a hopper's trunk)
LINK_RGBA = (0.70, 0.74, 0.80, 1.0)
STICK_RADIUS = 0.02                        #: of a stick figure's capsules, relative to the robot's size


class VideoError(RuntimeError):
    """No OpenGL context or no video writer: what is missing, and how to get it."""


def render_run(path, urdf_path, t, base_position, base_quaternion, q, speed=0.5, size=(640, 480), fps=25,
               floor=False, gravity=(0.0, 0.0, 0.0), progress=None):
    """Write the run (times ``t``, base positions, base quaternions ``(w, x, y, z)`` and shapes ``q``, one row
    each) to the MP4 ``path``, ``speed`` simulated seconds per second of video; returns the video's length,
    s.  ``floor``: a ground plane at z = 0 and a camera from the side (a hopper); else space, from above.
    ``progress(seconds)``: called with the seconds of video rendered so far."""
    frames = frame_states(np.asarray(t), fps, speed)
    scene = Scene(urdf_path, size, floor, gravity)
    writer = _writer(path, fps)
    try:
        for k, i in enumerate(frames):
            g1 = np.eye(4)
            g1[:3, :3] = quat_wxyz_to_matrix(base_quaternion[i])
            g1[:3, 3] = base_position[i]
            writer.append_data(scene.render(g1, np.asarray(q[i], dtype=float).reshape(-1),
                                            f"t = {t[i]:.2f} s  ({speed:g}x)"))
            if progress is not None:
                progress((k + 1) / fps)
    finally:
        writer.close()
        scene.close()
    return len(frames) / fps


def frame_states(t, fps, speed):
    """Index of the logged state nearest each frame's simulated time (``speed`` simulated s per video s)."""
    times = np.arange(0.0, t[-1] - t[0] + 1e-9, speed / fps) + t[0]
    return np.clip(np.searchsorted(t, times - 0.5 * speed / fps), 0, len(t) - 1)


class Scene:
    """The robot of ``urdf_path`` in an offscreen MuJoCo scene of ``size`` pixels (width, height)."""

    def __init__(self, urdf_path, size, floor=False, gravity=(0.0, 0.0, 0.0)):
        self.width, self.height = size
        model = FloatingBaseModel.from_urdf(urdf_path, gravity=gravity)
        self.mj, extent = _compile(model, urdf_path, size, floor)
        self.plant = MujocoPlant(self.mj, model.joint_names)
        self.data = self.plant.data
        self.floor = floor
        self.context = _gl_context(self.width, self.height)
        self.context.make_current()
        self.scene = mujoco.MjvScene(self.mj, maxgeom=2000)
        self.render_context = mujoco.MjrContext(self.mj, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self.render_context)
        self.viewport = mujoco.MjrRect(0, 0, self.width, self.height)
        self.option, self.perturb = mujoco.MjvOption(), mujoco.MjvPerturb()
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.camera.distance = (2.5 if floor else 1.8) * extent
        self.camera.azimuth, self.camera.elevation = (90.0, -10.0) if floor else (135.0, -25.0)
        self.pixels = np.zeros((self.height, self.width, 3), dtype=np.uint8)
        self.height_seen = None

    def render(self, g1, q, label=""):
        """The frame (height x width x 3, uint8) of the robot at ``(g1, q)``, the camera on its centre of mass."""
        self.plant.set_state(g1, q, np.zeros(6), np.zeros(len(q)))
        mujoco.mj_forward(self.mj, self.data)
        com = self.data.subtree_com[self.plant.root].copy()
        if self.floor:           # along the floor only, below the start: the hops show against the floor
            self.height_seen = 0.6 * com[2] if self.height_seen is None else self.height_seen
            com[2] = self.height_seen
        self.camera.lookat[:] = com
        mujoco.mjv_updateScene(self.mj, self.data, self.option, self.perturb, self.camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self.scene)
        mujoco.mjr_render(self.viewport, self.scene, self.render_context)
        if label:
            mujoco.mjr_overlay(mujoco.mjtFontScale.mjFONTSCALE_150, mujoco.mjtGridPos.mjGRID_TOPLEFT, self.viewport,
                               label, "", self.render_context)
        mujoco.mjr_readPixels(self.pixels, None, self.viewport, self.render_context)
        return np.flipud(self.pixels).copy()

    def close(self):
        self.render_context.free()
        self.context.free()


def _compile(model, urdf_path, size, floor):
    """``(MuJoCo model, the robot's size)`` to draw: the URDF's geometry (meshes, else primitives), sticks where a
    body has none, a free base, lights, and space or a floor."""
    xml = model.description.urdf if model.description is not None else Path(urdf_path).read_text()
    tree = ET.fromstring(xml)           # MuJoCo's URDF import drops visuals unless told not to
    ET.SubElement(ET.SubElement(tree, "mujoco"), "compiler", discardvisual="false")
    xml = ET.tostring(tree, encoding="unicode")
    base_dir, source = Path(urdf_path).parent, str(urdf_path)
    try:
        spec_from_urdf_string(xml, "meshes", base_dir, source).compile()
        geometry = "meshes"
    except (ModelError, ValueError):          # a mesh MuJoCo cannot find or read: the primitives
        geometry = "primitives"
    spec = spec_from_urdf_string(xml, geometry, base_dir, source)
    spec.compiler.discardvisual = False
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    extent = _extent(spec)
    root = spec.worldbody.first_body()
    root.add_freejoint(name="base_free_joint")
    for body in spec.bodies:
        if body.name == "world":
            continue
        color = BASE_RGBA if body.name == root.name else LINK_RGBA
        for geom in body.geoms:
            geom.rgba = color
            geom.contype = geom.conaffinity = 0
        if not body.geoms:
            _stick_figure(body, color, STICK_RADIUS * extent)
    spec.visual.global_.offwidth, spec.visual.global_.offheight = size
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.6, 0.6, 0.6]
    spec.worldbody.add_light(pos=[0.0, 0.0, 6.0], dir=[0.0, 0.0, -1.0], diffuse=[0.6, 0.6, 0.6])
    if floor:
        texture = spec.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D,
                                   builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.3, 0.34, 0.38],
                                   rgb2=[0.22, 0.25, 0.28], width=512, height=512)
        material = spec.add_material(name="grid", texrepeat=[8, 8], reflectance=0.1)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture.name
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], material="grid",
                                contype=0, conaffinity=0)
    try:
        return spec.compile(), extent
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot compile the scene of {source}: {exc}") from None


def _stick_figure(body, rgba, radius):
    """A sphere at ``body``'s origin and a capsule to each child's: a body without geometry still shows."""
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[1.5 * radius, 0, 0], rgba=rgba, contype=0, conaffinity=0)
    for child in body.bodies:
        if np.linalg.norm(child.pos) > 1e-6:
            body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0, 0, 0, *child.pos], size=[radius, 0, 0],
                          rgba=rgba, contype=0, conaffinity=0)


def _extent(spec):
    """The robot's size, m: MuJoCo's extent of its geometry, or the largest distance of a body's origin from the
    root's at the zero shape if larger."""
    model = spec.copy().compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    return max(float(np.linalg.norm(data.xpos[1:] - data.xpos[1], axis=1).max()), float(model.stat.extent), 0.1)


def _gl_context(width, height):
    """An offscreen OpenGL context (module doc)."""
    chosen = os.environ.get("MUJOCO_GL", "").lower() or ("egl" if not os.environ.get("DISPLAY") else "glfw")
    errors = []
    for backend in dict.fromkeys([chosen] + (["osmesa"] if chosen == "egl" else [])):
        try:
            if backend == "egl":
                from mujoco.egl import GLContext
            elif backend == "osmesa":
                from mujoco.osmesa import GLContext
            else:
                from mujoco.glfw import GLContext
            return GLContext(width, height)
        except Exception as exc:       # noqa: BLE001 (each backend fails its own way: ImportError, RuntimeError...)
            errors.append(f"{backend}: {' '.join(str(exc).split()) or type(exc).__name__}")
    raise VideoError(f"no OpenGL context for offscreen rendering ({'; '.join(errors)}): install Mesa's EGL "
                     "(libegl1, libgl1-mesa-dri) or OSMesa (libosmesa6), or set MUJOCO_GL")


def _writer(path, fps):
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise VideoError("--video needs imageio and imageio-ffmpeg (pip install -r requirements/lock.txt)") from None
    return imageio.get_writer(str(path), fps=fps, codec="libx264", quality=7, macro_block_size=2,
                              ffmpeg_log_level="error")
