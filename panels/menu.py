"""3D Viewport → Pose → Inverse Kinematics → DQ IK: the operators beside Blender's own IK
items in the Pose menu, so F3 search finds them too."""

import bpy


class DQIK_MT_pose(bpy.types.Menu):
    bl_label = "DQ IK"
    bl_idname = "DQIK_MT_pose"

    def draw(self, _context):
        layout = self.layout
        layout.operator("dqik.solve", icon='CON_KINEMATIC')
        layout.operator("dqik.live", icon='PLAY')
        layout.operator("dqik.bake", icon='KEYINGSET')
        layout.operator("dqik.add_target", icon='EMPTY_AXIS')
        layout.separator()
        layout.operator("dqik.targets_from_animation", icon='ANIM')
        layout.operator("dqik.plant", icon='SNAP_FACE')
        layout.separator()
        layout.operator("dqik.apply_preset")
        layout.operator("dqik.import_limits")
        layout.separator()
        layout.operator("dqik.build_chain", icon='ARMATURE_DATA')


def draw_pose_menu_entry(self, _context):
    self.layout.separator()
    self.layout.menu(DQIK_MT_pose.bl_idname)


CLASSES = (DQIK_MT_pose,)


def register_menu():
    bpy.types.VIEW3D_MT_pose_ik.append(draw_pose_menu_entry)


def unregister_menu():
    bpy.types.VIEW3D_MT_pose_ik.remove(draw_pose_menu_entry)
