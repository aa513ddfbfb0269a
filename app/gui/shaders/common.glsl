/* Lighting shared by every surface of the 3D viewer: a warm sun, a
 * hemisphere sky/ground ambient, aerial haze with distance, and a gentle
 * tone curve.  Colours are linear inside, sRGB at the end.  Prepended to
 * each fragment shader after the #version line. */
uniform vec3 u_sun;          /* towards the sun, display space, unit */
uniform vec3 u_eye;          /* camera position, display space */
uniform float u_haze_m;      /* distance at which haze reaches 1 - 1/e */
uniform vec3 u_horizon;      /* linear sky colour at the horizon */

vec3
to_linear (vec3 c)
{
  return pow (max (c, vec3 (0.0)), vec3 (2.2));
}

vec3
shade (vec3 albedo, vec3 n, vec3 pos)
{
  float ndl = max (dot (n, u_sun), 0.0);
  /* The sun dims and reddens near the horizon. */
  float low = clamp (u_sun.y * 3.0, 0.0, 1.0);
  vec3 sun = mix (vec3 (1.0, 0.62, 0.38), vec3 (1.0, 0.93, 0.84), low) * 2.0 * (0.35 + 0.65 * low);
  vec3 sky = mix (vec3 (0.07, 0.06, 0.05), vec3 (0.26, 0.33, 0.45), 0.5 + 0.5 * n.y);
  vec3 c = albedo * (sun * ndl + sky);
  float d = length (pos - u_eye);
  float haze = 1.0 - exp (-d / u_haze_m);
  return mix (c, u_horizon, 0.35 * haze);
}

vec4
finish (vec3 c)
{
  /* Soft shoulder so a bright sun does not clip, then sRGB. */
  c = c / (1.0 + 0.3 * c) * 1.15;
  return vec4 (pow (clamp (c, 0.0, 1.0), vec3 (1.0 / 2.2)), 1.0);
}
