/* Water: the sky reflected by Fresnel, the sun's glint, and a body that
 * darkens and grows opaque with depth (the terrain's height under the
 * pixel), so shallows show the ground and the shore has no hard seam.
 * Where the ground stands above the water nothing is drawn. */
uniform sampler2D u_height;
uniform ivec2 u_size;
uniform float u_height_m;
uniform float u_level_m;
uniform float u_murk_m;      /* depth at which the body reaches 1 - 1/e */
uniform vec3 u_zenith;

in vec3 v_pos;
in vec2 v_uv;
out vec4 frag;

void
main ()
{
  vec2 t = (v_uv * vec2 (u_size - 1) + 0.5) / vec2 (u_size);
  float depth = u_level_m - texture (u_height, t).r * u_height_m;
  if (depth <= 0.0)
    discard;
  const vec3 n = vec3 (0.0, 1.0, 0.0);
  vec3 v = normalize (u_eye - v_pos);
  vec3 r = reflect (-v, n);
  float lit = sunlight (v_pos, n);
  float murk = 1.0 - exp (-depth / u_murk_m);
  float fresnel = 0.02 + 0.98 * pow (1.0 - max (v.y, 0.0), 5.0);
  vec3 body = mix (vec3 (0.05, 0.20, 0.22), vec3 (0.008, 0.035, 0.06), murk)
              * (sun_colour () * max (u_sun.y, 0.0) * lit + vec3 (0.26, 0.33, 0.45));
  vec3 sky = mix (u_horizon, u_zenith, clamp (r.y, 0.0, 1.0));
  vec3 glint = sun_colour () * pow (max (dot (r, u_sun), 0.0), 2000.0) * 1.5 * lit;
  vec3 c = mix (body, sky, fresnel) + glint;
  float a = max (mix (0.45, 0.95, murk), fresnel) * smoothstep (0.0, 0.05 * u_murk_m, depth);
  frag = vec4 (finish (hazed (c, v_pos)).rgb, a);
}
