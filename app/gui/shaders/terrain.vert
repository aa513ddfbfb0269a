/* A terrain from a height texture: gl_VertexID is the vertex of a grid
 * of u_grid_w columns whose vertices sit every u_step samples (a coarser
 * level when samples are smaller than a pixel).  Positions in metres (x
 * east, y up, z north, as the engine has them) go through u_model
 * (vertical exaggeration and the mirror to display space).  Normals are
 * taken per fragment, so a coarse level keeps the full shading detail. */
uniform sampler2D u_height;
uniform ivec2 u_size;
uniform int u_grid_w;
uniform int u_step;
uniform vec2 u_origin;       /* x of column 0, z of row 0 */
uniform float u_cell;
uniform float u_height_m;
uniform mat4 u_model;
uniform mat4 u_view_proj;

out vec3 v_pos;
out vec2 v_uv;

void
main ()
{
  ivec2 ij = min (ivec2 (gl_VertexID % u_grid_w, gl_VertexID / u_grid_w) * u_step, u_size - 1);
  float h = texelFetch (u_height, ij, 0).r;
  vec3 p = vec3 (u_origin.x + float (ij.x) * u_cell, h * u_height_m,
                 u_origin.y - float (ij.y) * u_cell);
  vec4 wp = u_model * vec4 (p, 1.0);

  v_pos = wp.xyz;
  v_uv = vec2 (ij) / vec2 (max (u_size - 1, ivec2 (1)));
  gl_Position = u_view_proj * wp;
}
