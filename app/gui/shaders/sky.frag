/* The backdrop: a vertical gradient over the viewport, pale haze at the
 * bottom to a deeper blue at the top (as modelling tools do, so a camera
 * looking down still sees sky rather than grey), and a glow around the
 * sun when it is in view. */
uniform mat4 u_inv_view_proj;
uniform vec3 u_zenith;

in vec2 v_ndc;
out vec4 frag;

void
main ()
{
  vec4 a = u_inv_view_proj * vec4 (v_ndc, -1.0, 1.0);
  vec4 b = u_inv_view_proj * vec4 (v_ndc, 1.0, 1.0);
  vec3 dir = normalize (b.xyz / b.w - a.xyz / a.w);
  float t = clamp (0.5 + 0.5 * v_ndc.y, 0.0, 1.0);
  vec3 c = mix (u_horizon, u_zenith, t * t * (3.0 - 2.0 * t));
  float s = max (dot (dir, u_sun), 0.0);
  c += vec3 (1.0, 0.85, 0.6) * (0.2 * pow (s, 24.0) + 0.6 * pow (s, 600.0));
  frag = vec4 (pow (clamp (c, 0.0, 1.0), vec3 (1.0 / 2.2)), 1.0);
}
