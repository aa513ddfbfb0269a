/* Terrain shading: the normal from central differences of the bilinear
 * height one sample either side, the colour from the 2D viewer's
 * hypsometric ramp by height, with a draped image, splat or mask over it
 * (its alpha says how much). */
uniform sampler2D u_height;
uniform ivec2 u_size;
uniform float u_cell;
uniform float u_height_m;
uniform mat3 u_normal_mat;
uniform sampler2D u_drape;
uniform bool u_has_drape;
uniform ivec2 u_drape_size;
uniform bool u_wire;

in vec3 v_pos;
in vec2 v_uv;
out vec4 frag;

vec3
ramp (float h)
{
  const float at[8] = float[8] (0.0, 0.02, 0.10, 0.35, 0.60, 0.80, 0.95, 1.0);
  const vec3 col[8] = vec3[8] (vec3 (0.16, 0.29, 0.43), vec3 (0.80, 0.76, 0.58),
                               vec3 (0.38, 0.55, 0.30), vec3 (0.55, 0.62, 0.36),
                               vec3 (0.55, 0.46, 0.34), vec3 (0.55, 0.53, 0.52),
                               vec3 (0.95, 0.96, 0.98), vec3 (1.0, 1.0, 1.0));
  h = clamp (h, 0.0, 1.0);
  for (int k = 0; k < 7; k++)
    if (h <= at[k + 1])
      return mix (col[k], col[k + 1], (h - at[k]) / (at[k + 1] - at[k]));
  return col[7];
}

/* Height at sample position S (fractional), bilinear. */
float
h_at (vec2 s)
{
  return texture (u_height, (s + 0.5) / vec2 (u_size)).r;
}

void
main ()
{
  vec2 s = v_uv * vec2 (u_size - 1);
  vec2 lo = max (s - 1.0, vec2 (0.0)), hi = min (s + 1.0, vec2 (u_size - 1));
  /* Slopes in metres per metre; sample rows grow southwards (-z). */
  float dx = (h_at (vec2 (hi.x, s.y)) - h_at (vec2 (lo.x, s.y))) * u_height_m
             / (max (hi.x - lo.x, 1e-3) * u_cell);
  float dz = (h_at (vec2 (s.x, lo.y)) - h_at (vec2 (s.x, hi.y))) * u_height_m
             / (max (hi.y - lo.y, 1e-3) * u_cell);
  vec3 n = normalize (u_normal_mat * vec3 (-dx, 1.0, -dz));
  vec3 c = ramp (h_at (s));

  if (u_wire)
    {
      frag = vec4 (0.05, 0.07, 0.09, 1.0);
      return;
    }
  if (u_has_drape)
    {
      /* Texel centres: sample k of the drape sits at (k + 0.5) / size. */
      vec2 t = (v_uv * vec2 (u_drape_size - 1) + 0.5) / vec2 (u_drape_size);
      vec4 d = texture (u_drape, t);
      c = mix (c, d.rgb, d.a);
    }
  frag = finish (shade (to_linear (c), n, v_pos));
}
