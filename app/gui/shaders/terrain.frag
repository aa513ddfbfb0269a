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
uniform float u_grid_m;      /* metre grid spacing, 0 for none */
uniform float u_wire_step;   /* wireframe cells in samples, 0 for none */

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

/* Coverage (0..1) of lines at the integers of G, about one pixel wide,
 * faded out where they would be closer than a few pixels. */
float
lines (vec2 g)
{
  vec2 w = fwidth (g);
  vec2 d = abs (fract (g - 0.5) - 0.5) / max (w, vec2 (1e-6));
  float fade = 1.0 - smoothstep (0.12, 0.3, max (w.x, w.y));
  return (1.0 - clamp (min (d.x, d.y) - 0.5, 0.0, 1.0)) * fade;
}

/* Coverage of the edges of cells one unit wide in G, W the pixel
 * footprint of G: the cell edges and the diagonal each strip cell is
 * split along. */
float
cell_edges (vec2 g, vec2 w)
{
  vec2 f = fract (g);
  vec2 d = min (f, 1.0 - f) / max (w, vec2 (1e-6));
  float diag = abs (f.x + f.y - 1.0) / max (w.x + w.y, 1e-6);
  return 1.0 - clamp (min (min (d.x, d.y), diag) - 0.5, 0.0, 1.0);
}

/* The wireframe drawn on the surface: cells of STEP samples (the level
 * drawn) where they are at least eight pixels wide, else the coarsest
 * power of two times that which is; the finer of the two levels around
 * that size fades in, so nothing pops and a dense mesh never turns into
 * a dark sheet.  Coarse edges are a subset of fine ones. */
float
wire (vec2 s, float step)
{
  vec2 fw = fwidth (s);
  float lod = max (log2 (max (fw.x, fw.y) / 0.125), log2 (step));
  float l0 = floor (lod), k0 = exp2 (l0), k1 = 2.0 * k0;
  return max (cell_edges (s / k1, fw / k1), cell_edges (s / k0, fw / k0) * (1.0 - fract (lod)));
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

  if (u_has_drape)
    {
      /* Texel centres: sample k of the drape sits at (k + 0.5) / size. */
      vec2 t = (v_uv * vec2 (u_drape_size - 1) + 0.5) / vec2 (u_drape_size);
      vec4 d = texture (u_drape, t);
      c = mix (c, d.rgb, d.a);
    }
  c = to_linear (c);
  if (u_grid_m > 0.0)
    c *= 1.0 - 0.55 * lines (v_pos.xz / u_grid_m);
  c = shade (c, n, v_pos);
  if (u_wire_step > 0.0)
    c = mix (c, vec3 (0.004, 0.006, 0.008), 0.85 * wire (s, u_wire_step));
  frag = finish (c);
}
