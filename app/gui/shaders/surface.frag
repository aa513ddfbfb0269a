/* Lit meshes and markers: two-sided, back faces a little darker.
 * Markers glow a little (u_emit) so their colours survive shade and haze. */
uniform bool u_wire;
uniform float u_emit;

in vec3 v_pos;
in vec3 v_normal;
in vec3 v_color;
out vec4 frag;

void
main ()
{
  vec3 n = normalize (v_normal);
  vec3 c = to_linear (v_color);

  if (u_wire)
    {
      frag = vec4 (0.05, 0.07, 0.09, 1.0);
      return;
    }
  if (!gl_FrontFacing)
    {
      n = -n;
      c *= 0.6;
    }
  frag = finish (mix (shade (c, n, v_pos), c, u_emit));
}
