/* Scatter instances as markers: one small cone drawn once per instance,
 * placed by the instance's position, rotation (quaternion) and scale.
 * Vertical exaggeration moves the instances with the ground but does not
 * stretch the markers. */
layout (location = 0) in vec3 a_pos;
layout (location = 1) in vec3 a_normal;
layout (location = 2) in vec3 i_pos;
layout (location = 3) in vec4 i_rot;
layout (location = 4) in vec3 i_scale;
layout (location = 5) in int i_proto;

uniform mat4 u_model;
uniform mat4 u_view_proj;
uniform float u_marker_m[10];  /* marker height per prototype */
uniform vec3 u_palette[10];

out vec3 v_pos;
out vec3 v_normal;
out vec3 v_color;

vec3
qrot (vec4 q, vec3 v)
{
  return v + 2.0 * cross (q.xyz, cross (q.xyz, v) + q.w * v);
}

void
main ()
{
  vec3 off = qrot (i_rot, a_pos * i_scale * u_marker_m[i_proto % 10]);
  vec3 n = qrot (i_rot, a_normal / max (i_scale, vec3 (1e-6)));
  vec4 base = u_model * vec4 (i_pos, 1.0);
  vec3 wp = base.xyz + vec3 (off.x, off.y, -off.z);

  v_pos = wp;
  v_normal = normalize (vec3 (n.x, n.y, -n.z));
  v_color = u_palette[i_proto % 10];
  gl_Position = u_view_proj * vec4 (wp, 1.0);
}
