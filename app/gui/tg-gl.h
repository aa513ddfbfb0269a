/* GL helpers of the 3D viewer that hold no view state (see tg-gl.c). */
#pragma once

#include <epoxy/gl.h>
#include <gio/gio.h>

/* Ends each row's triangle strip in tg_gl_strip_indices. */
#define TG_GL_RESTART_INDEX 0xffffffffu

/* The program of shaders VERT and FRAG from the gresource; FRAG gets
 * common.glsl first.  0 and ERROR (naming the shader and the compiler's
 * log) on failure. */
GLuint tg_gl_program (const char *vert, const char *frag, GError **error);
/* A renderbuffer of FORMAT, W x H, with SAMPLES (0: single-sampled). */
GLuint tg_gl_renderbuffer (GLenum format, int samples, int w, int h);
/* A framebuffer of COLOR and DEPTH renderbuffers, left bound. */
GLuint tg_gl_framebuffer (GLuint color, GLuint depth);
/* A SIZE² depth texture that compares (for sampler2DShadow) with linear
 * filtering, and the framebuffer that draws into it. */
void tg_gl_shadow_map (int size, GLuint *tex, GLuint *fbo);
/* An index buffer of triangle strips over a GW x GH grid of vertices,
 * one strip per row; *COUNT gets the number of indices. */
GLuint tg_gl_strip_indices (int gw, int gh, GLsizei *count);
