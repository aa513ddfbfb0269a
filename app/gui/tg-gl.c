/* GL helpers of the 3D viewer that hold no view state: programs from the
 * gresource's shaders, render targets, the shadow map's depth texture and
 * the terrain's strip indices.  Each expects a current GL 3.3 context. */
#include "config.h"

#include "tg-gl.h"

#include <string.h>

#define SHADERS "/io/github/terrane/Terrane/shaders/"

static GLuint
compile (GLenum kind, const char *name, GError **error)
{
  g_autoptr (GBytes) body = NULL, common = NULL;
  g_autofree char *path = g_strconcat (SHADERS, name, NULL);
  const char *src[3];
  GLint len[3], ok = 0;
  GLuint s;

  body = g_resources_lookup_data (path, 0, error);
  if (!body)
    return 0;
  if (kind == GL_FRAGMENT_SHADER
      && !(common = g_resources_lookup_data (SHADERS "common.glsl", 0, error)))
    return 0;
  src[0] = "#version 330 core\n";
  len[0] = (GLint) strlen (src[0]);
  src[1] = common ? g_bytes_get_data (common, NULL) : "";
  len[1] = common ? (GLint) g_bytes_get_size (common) : 0;
  src[2] = g_bytes_get_data (body, NULL);
  len[2] = (GLint) g_bytes_get_size (body);
  s = glCreateShader (kind);
  glShaderSource (s, 3, src, len);
  glCompileShader (s);
  glGetShaderiv (s, GL_COMPILE_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetShaderInfoLog (s, sizeof log, NULL, log);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", name, log);
      glDeleteShader (s);
      return 0;
    }
  return s;
}

GLuint
tg_gl_program (const char *vert, const char *frag, GError **error)
{
  GLuint vs = compile (GL_VERTEX_SHADER, vert, error), fs = 0, p;
  GLint ok = 0;

  if (!vs || !(fs = compile (GL_FRAGMENT_SHADER, frag, error)))
    {
      glDeleteShader (vs);
      return 0;
    }
  p = glCreateProgram ();
  glAttachShader (p, vs);
  glAttachShader (p, fs);
  glLinkProgram (p);
  glDeleteShader (vs);
  glDeleteShader (fs);
  glGetProgramiv (p, GL_LINK_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetProgramInfoLog (p, sizeof log, NULL, log);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s + %s: %s", vert, frag, log);
      glDeleteProgram (p);
      return 0;
    }
  return p;
}

/* The sun's depth map: a depth texture that compares (sampler2DShadow)
 * with linear filtering, so each lookup blends four texels. */
void
tg_gl_shadow_map (int size, GLuint *tex, GLuint *fbo)
{
  glGenTextures (1, tex);
  glBindTexture (GL_TEXTURE_2D, *tex);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT24, size, size, 0,
                GL_DEPTH_COMPONENT, GL_UNSIGNED_INT, NULL);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_COMPARE_MODE, GL_COMPARE_REF_TO_TEXTURE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_COMPARE_FUNC, GL_LEQUAL);
  glGenFramebuffers (1, fbo);
  glBindFramebuffer (GL_FRAMEBUFFER, *fbo);
  glFramebufferTexture2D (GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, *tex, 0);
  glDrawBuffer (GL_NONE);
  glReadBuffer (GL_NONE);
  glBindFramebuffer (GL_FRAMEBUFFER, 0);
}

GLuint
tg_gl_renderbuffer (GLenum format, int samples, int w, int h)
{
  GLuint rb;

  glGenRenderbuffers (1, &rb);
  glBindRenderbuffer (GL_RENDERBUFFER, rb);
  if (samples > 0)
    glRenderbufferStorageMultisample (GL_RENDERBUFFER, samples, format, w, h);
  else
    glRenderbufferStorage (GL_RENDERBUFFER, format, w, h);
  return rb;
}

GLuint
tg_gl_framebuffer (GLuint color, GLuint depth)
{
  GLuint fb;

  glGenFramebuffers (1, &fb);
  glBindFramebuffer (GL_FRAMEBUFFER, fb);
  glFramebufferRenderbuffer (GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
  glFramebufferRenderbuffer (GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth);
  return fb;
}

/* Triangle strips over a grid of GW x GH vertices, one strip per row,
 * separated by the restart index. */
GLuint
tg_gl_strip_indices (int gw, int gh, GLsizei *count)
{
  gsize n = (gsize) (gh - 1) * (2 * (gsize) gw + 1);
  guint32 *idx = g_new (guint32, n), *o = idx;
  GLuint ibo;

  for (int j = 0; j + 1 < gh; j++)
    {
      for (int i = 0; i < gw; i++)
        {
          *o++ = (guint32) j * gw + i;
          *o++ = (guint32) (j + 1) * gw + i;
        }
      *o++ = TG_GL_RESTART_INDEX;
    }
  glGenBuffers (1, &ibo);
  glBindBuffer (GL_ELEMENT_ARRAY_BUFFER, ibo);
  glBufferData (GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr) (n * sizeof (guint32)), idx, GL_STATIC_DRAW);
  g_free (idx);
  *count = (GLsizei) n;
  return ibo;
}
