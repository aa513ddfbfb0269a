/* The shadow map pass writes depth only. */
void
main ()
{
}
