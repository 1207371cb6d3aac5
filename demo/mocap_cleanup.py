"""The demo's motion-capture clean-up: a walk clip made the way real capture arrives (keyed on a
metarig, written and read back with Blender's BVH exporter and importer: ``tests/mocap_clips``),
its ankles and wrists given targets by Targets from Animation, the feet planted with Plant, the
left hand raised 12 cm, and every frame solved on frame change, as an animator cleaning a day's
capture would.

Measured into results.json: how far the unedited playback strays from the clip (it should not),
how far each planted ankle moves within a contact, whether the raised hand meets its target, the
largest turn of a chain bone between two frames beyond the clip's own, and the frame changes'
time. Drawn (``plant.png``): the left ankle target's speed over the clip before and after Plant
(grey, orange): the capture's skating during each contact (a few cm/s) is held at zero, eased in
and out."""

import os
import struct
import time
import zlib

import numpy as np

CLIP_FRAMES = 96


def run(dqik, output_dir):
    import pathlib
    import tempfile

    import bpy
    import mocap_clips as mc
    from console import captured_output

    bpy.ops.wm.read_homefile(use_empty=True)
    with tempfile.TemporaryDirectory() as folder, captured_output():
        clip, targets = mc.clip_with_targets(pathlib.Path(folder), CLIP_FRAMES)
    scene = bpy.context.scene
    frames = range(scene.frame_start, scene.frame_end + 1)
    animation = mc.animation_rotations(clip, frames)
    clip.dqik.use_solve_on_frame_change = True
    kept, _ = mc.played(dqik, clip, frames)
    before = mc.keyed_locations(targets["shin.L"], frames)
    mc.select(clip, mc.FEET)
    with captured_output():
        bpy.ops.dqik.plant()
    after = mc.keyed_locations(targets["shin.L"], frames)
    mc.shift_keys(targets["forearm.L"], 2, {f: 0.12 for f in frames})
    phases = dqik.dq_ik_addon.blender.authoring.plant.contact_phases(
        np.array(frames, float), before, scene.render.fps, 0.03, 0.2, 5)
    rotations, ankles, hand_errors, times = {}, {}, [], []
    for frame in frames:
        started = time.perf_counter()
        scene.frame_set(frame)
        times.append((time.perf_counter() - started) * 1e3)
        rotations[frame] = mc.chain_rotations(clip, mc.CHAIN)
        ankles[frame] = np.array(clip.matrix_world @ clip.pose.bones["shin.L"].tail)
        hand = np.array(clip.matrix_world @ clip.pose.bones["forearm.L"].tail)
        hand_errors.append(np.linalg.norm(hand - np.array(
            targets["forearm.L"].matrix_world.translation)))
    drift = [max(np.linalg.norm(ankles[f] - ankles[p.first]) for f in range(p.first, p.last + 1))
             for p in phases]
    _plot(os.path.join(output_dir, "plant.png"), before, after, scene.render.fps)
    return {
        "clip": f"BVH walk, {len(clip.pose.bones)} bones, {len(frames)} frames",
        "unedited_max_deg_from_clip": round(float(np.degrees(max(
            mc.angle_between(kept[f], animation[f]).max() for f in frames))), 4),
        "left_foot_contacts": [[p.first, p.last] for p in phases],
        "planted_ankle_drift_mm_max": round(1e3 * max(drift, default=0.0), 4),
        "raised_hand_error_mm_max": round(1e3 * max(hand_errors), 5),
        "worst_pop_deg": round(float(np.degrees(mc.worst_pop(rotations, animation))), 2),
        "frame_change_ms_median": round(float(np.median(times)), 2),
        "frame_change_ms_max": round(float(np.max(times)), 2),
        "picture": "plant.png",
    }


def _plot(path, before, after, fps, size=(900, 320)):
    """A line chart of the speed (m/s) of ``before`` (grey) and ``after`` (orange) positions
    over the frames, written as a PNG with numpy and zlib alone."""
    width, height = size
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    margin, top = 40, 0.4                 # m/s at the top of the chart
    image[height - margin, margin:width - margin] = 0
    image[margin:height - margin, margin] = 0
    for metres in (0.1, 0.2, 0.3):
        image[height - margin - int((height - 2 * margin) * metres / top),
              margin:width - margin:4] = 200
    for points, colour in ((before, (150, 150, 150)), (after, (235, 120, 20))):
        speed = np.linalg.norm(np.diff(points, axis=0), axis=1) * fps
        xs = margin + (width - 2 * margin) * np.arange(len(speed)) / max(len(speed) - 1, 1)
        ys = height - margin - (height - 2 * margin) * np.clip(speed / top, 0.0, 1.0)
        dense = np.linspace(0.0, len(speed) - 1, 40 * len(speed))
        px = np.interp(dense, np.arange(len(speed)), xs).astype(int)
        py = np.interp(dense, np.arange(len(speed)), ys).astype(int)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                image[np.clip(py + dy, 0, height - 1), np.clip(px + dx, 0, width - 1)] = colour
    rows = b"".join(b"\x00" + row.tobytes() for row in image)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                                  0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def summary_lines(result):
    """The console summary of ``run``'s result."""
    return [f"mocap clean-up ({result['clip']}): unedited playback within "
            f"{result['unedited_max_deg_from_clip']}° of the clip; left foot contacts "
            f"{result['left_foot_contacts']}, planted ankle drift ≤ "
            f"{result['planted_ankle_drift_mm_max']} mm; raised hand ≤ "
            f"{result['raised_hand_error_mm_max']} mm off; worst pop {result['worst_pop_deg']}°; "
            f"frame change {result['frame_change_ms_median']} ms median, "
            f"{result['frame_change_ms_max']} ms slowest"]
