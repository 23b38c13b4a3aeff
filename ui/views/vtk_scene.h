// The VTK side of the 3D view, kept apart from Qt's OpenGL headers (VTK's
// GLEW and Qt's qopengl.h must not meet in one translation unit). Plain
// C++; VolumeView drives it from a QOpenGLWidget (DESIGN.md, "Environment
// facts": a vtkGenericOpenGLRenderWindow rendering into the widget's context).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>

namespace tomo::ui {

class VtkScene {
public:
    struct Callbacks {
        std::function<void()> makeCurrent;   ///< make the widget's context current (only if it is not)
        std::function<bool()> isCurrent;     ///< is the widget's context current?
        std::function<void()> requestUpdate; ///< schedule a repaint of the widget
    };
    enum class Button { Left, Middle, Right };

    explicit VtkScene(Callbacks callbacks);
    ~VtkScene();
    VtkScene(const VtkScene&) = delete;
    VtkScene& operator=(const VtkScene&) = delete;

    /// In QOpenGLWidget::initializeGL (context current); sizes in device pixels.
    void initialize(int width, int height);
    void resize(int width, int height);
    /// In QOpenGLWidget::paintGL: renders and blits into `framebuffer`.
    void paint(unsigned framebuffer, int width, int height);

    /// Copies the volume ([z][y][x] floats); spacing in detector pixels.
    void setVolume(const float* data, int width, int height, int depth, double spacingXY, double spacingZ);
    /// Hides the volume, planes and outline (nothing to show).
    void clearVolume();
    /// The transfer function: colours over [threshold, high] from the
    /// 256-entry table (0xAARRGGBB); opacity 0 up to `threshold`, rising to
    /// `opacity` at `high`. Planes show the same colours, transparent below
    /// the threshold.
    void setTransferFunction(float threshold, float high, double opacity, const std::array<std::uint32_t, 256>& table);
    void setShowVolume(bool on);
    void setShowPlanes(bool on);
    void setPlanes(int x, int y, int z);
    void resetCamera();

    void mousePress(Button b, int x, int y, bool ctrl, bool shift, bool doubleClick);
    void mouseRelease(Button b, int x, int y, bool ctrl, bool shift);
    void mouseMove(int x, int y, bool ctrl, bool shift);
    void wheel(int x, int y, int delta, bool ctrl, bool shift);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace tomo::ui
