/* The water plane: one quad over the terrain's rectangle at height
 * u_level_m (metres, engine space), through u_model like the terrain. */
uniform ivec2 u_size;
uniform vec2 u_origin;       /* x of column 0, z of row 0 */
uniform float u_cell;
uniform float u_level_m;
uniform mat4 u_model;
uniform mat4 u_view_proj;

out vec3 v_pos;
out vec2 v_uv;

void
main ()
{
  vec2 uv = vec2 (float (gl_VertexID & 1), float (gl_VertexID >> 1));
  vec2 span = vec2 (u_size - 1) * u_cell;
  vec4 wp = u_model * vec4 (u_origin.x + uv.x * span.x, u_level_m, u_origin.y - uv.y * span.y, 1.0);

  v_pos = wp.xyz;
  v_uv = uv;
  gl_Position = u_view_proj * wp;
}
