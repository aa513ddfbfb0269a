/* A mesh chunk: positions and normals in metres as the engine made them. */
layout (location = 0) in vec3 a_pos;
layout (location = 1) in vec3 a_normal;

uniform mat4 u_model;
uniform mat3 u_normal_mat;
uniform mat4 u_view_proj;

out vec3 v_pos;
out vec3 v_normal;
out vec3 v_color;

void
main ()
{
  vec4 wp = u_model * vec4 (a_pos, 1.0);
  vec3 n = normalize (u_normal_mat * a_normal);

  v_pos = wp.xyz;
  v_normal = n;
  /* Rock on steep faces and undersides, a dry grass on what faces up. */
  v_color = mix (vec3 (0.56, 0.52, 0.47), vec3 (0.50, 0.58, 0.33), smoothstep (0.72, 0.9, a_normal.y));
  gl_Position = u_view_proj * wp;
}
