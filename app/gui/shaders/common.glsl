/* Lighting shared by every surface of the 3D viewer: a warm sun that
 * casts shadows (a shadow map seen from the sun), a hemisphere sky/ground
 * ambient, aerial haze with distance, and a gentle tone curve.  Colours
 * are linear inside, sRGB at the end.  Prepended to each fragment shader
 * after the #version line. */
uniform vec3 u_sun;          /* towards the sun, display space, unit */
uniform vec3 u_eye;          /* camera position, display space */
uniform float u_haze_m;      /* distance at which haze reaches 1 - 1/e */
uniform vec3 u_horizon;      /* linear sky colour at the horizon */
uniform bool u_has_shadow;
uniform sampler2DShadow u_shadow;
uniform mat4 u_light_vp;     /* display space to the shadow map's clip space */
uniform float u_shadow_texel; /* metres of display space per shadow texel */

vec3
to_linear (vec3 c)
{
  return pow (max (c, vec3 (0.0)), vec3 (2.2));
}

/* How much of the sun reaches POS (0..1): four filtered taps of the
 * shadow map, from a point pushed off the surface along its normal N so
 * that a surface does not shadow itself. */
float
sunlight (vec3 pos, vec3 n)
{
  if (!u_has_shadow)
    return 1.0;
  vec4 p = u_light_vp * vec4 (pos + n * (2.0 * u_shadow_texel), 1.0);
  vec3 s = p.xyz / p.w * 0.5 + 0.5;
  if (any (lessThan (s, vec3 (0.0))) || any (greaterThan (s, vec3 (1.0))))
    return 1.0;
  vec2 t = 0.75 / vec2 (textureSize (u_shadow, 0));
  float sum = texture (u_shadow, vec3 (s.xy + vec2 (-t.x, -t.y), s.z))
              + texture (u_shadow, vec3 (s.xy + vec2 (t.x, -t.y), s.z))
              + texture (u_shadow, vec3 (s.xy + vec2 (-t.x, t.y), s.z))
              + texture (u_shadow, vec3 (s.xy + vec2 (t.x, t.y), s.z));
  return sum * 0.25;
}

vec3
sun_colour ()
{
  /* The sun dims and reddens near the horizon. */
  float low = clamp (u_sun.y * 3.0, 0.0, 1.0);
  return mix (vec3 (1.0, 0.62, 0.38), vec3 (1.0, 0.93, 0.84), low) * 2.0 * (0.35 + 0.65 * low);
}

vec3
hazed (vec3 c, vec3 pos)
{
  float d = length (pos - u_eye);
  float haze = 1.0 - exp (-d / u_haze_m);
  return mix (c, u_horizon, 0.45 * haze);
}

vec3
shade (vec3 albedo, vec3 n, vec3 pos)
{
  float ndl = max (dot (n, u_sun), 0.0);
  if (ndl > 0.0)
    ndl *= sunlight (pos, n);
  vec3 sky = mix (vec3 (0.07, 0.06, 0.05), vec3 (0.26, 0.33, 0.45), 0.5 + 0.5 * n.y);
  return hazed (albedo * (sun_colour () * ndl + sky), pos);
}

vec4
finish (vec3 c)
{
  /* Soft shoulder so a bright sun does not clip, then sRGB. */
  c = c / (1.0 + 0.3 * c) * 1.15;
  return vec4 (pow (clamp (c, 0.0, 1.0), vec3 (1.0 / 2.2)), 1.0);
}
