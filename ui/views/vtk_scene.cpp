#include "views/vtk_scene.h"

#include <vtkActor.h>
#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkColorTransferFunction.h>
#include <vtkCubeAxesActor.h>
#include <vtkFloatArray.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkImageData.h>
#include <vtkImageProperty.h>
#include <vtkImageSlice.h>
#include <vtkImageSliceMapper.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkLookupTable.h>
#include <vtkNew.h>
#include <vtkOpenGLState.h>
#include <vtkOutlineSource.h>
#include <vtkPiecewiseFunction.h>
#include <vtkPointData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSmartPointer.h>
#include <vtkSmartVolumeMapper.h>
#include <vtkTextProperty.h>
#include <vtkVolume.h>
#include <vtkVolumeProperty.h>
#include <vtk_glew.h>

#include <algorithm>
#include <cstring>

namespace tomo::ui {

struct VtkScene::Impl {
    Callbacks callbacks;
    vtkNew<vtkGenericOpenGLRenderWindow> window;
    vtkNew<vtkGenericRenderWindowInteractor> interactor;
    vtkNew<vtkInteractorStyleTrackballCamera> style;
    vtkNew<vtkRenderer> renderer;
    vtkNew<vtkImageData> image;
    vtkNew<vtkSmartVolumeMapper> volumeMapper;
    vtkNew<vtkVolumeProperty> volumeProperty;
    vtkNew<vtkColorTransferFunction> colours;
    vtkNew<vtkPiecewiseFunction> opacity;
    vtkNew<vtkVolume> volume;
    vtkNew<vtkLookupTable> lut;
    std::array<vtkSmartPointer<vtkImageSliceMapper>, 3> planeMappers;
    std::array<vtkSmartPointer<vtkImageSlice>, 3> planes;
    vtkNew<vtkOutlineSource> outline;
    vtkNew<vtkPolyDataMapper> outlineMapper;
    vtkNew<vtkActor> outlineActor;
    vtkNew<vtkCubeAxesActor> axes;
    bool initialized = false;
    bool hasVolume = false;
    bool showVolume = true;
    bool showPlanes = true;
    std::array<int, 3> dims{0, 0, 0};
    std::array<vtkSmartPointer<vtkCallbackCommand>, 3> observers;

    void updateVisibility() {
        volume->SetVisibility(hasVolume && showVolume);
        for (auto& p : planes) p->SetVisibility(hasVolume && showPlanes);
        outlineActor->SetVisibility(hasVolume);
        axes->SetVisibility(hasVolume);
    }
};

namespace {

const VtkScene::Callbacks& callbacksOf(void* clientData) { return *static_cast<VtkScene::Callbacks*>(clientData); }

} // namespace

VtkScene::VtkScene(Callbacks callbacks) : d(std::make_unique<Impl>()) {
    d->callbacks = std::move(callbacks);
    d->window->SetMultiSamples(0);
    d->window->SetReadyForRendering(false);
    d->window->SetFrameBlitModeToNoBlit();
    d->window->AddRenderer(d->renderer);
    d->interactor->SetRenderWindow(d->window);
    d->interactor->SetInteractorStyle(d->style);
    d->interactor->EnableRenderOff(); // Qt decides when to paint
    d->renderer->SetBackground(0.09, 0.10, 0.12);
    d->renderer->SetBackground2(0.22, 0.24, 0.28);
    d->renderer->GradientBackgroundOn();

    // The context belongs to the QOpenGLWidget: VTK asks, the widget answers.
    // Never rebind when already current (Qt's FBO would be rebound on every
    // one of VTK's many calls: empty image, GL error 0x506).
    auto makeCurrent = vtkSmartPointer<vtkCallbackCommand>::New();
    makeCurrent->SetClientData(&d->callbacks);
    makeCurrent->SetCallback([](vtkObject*, unsigned long, void* client, void*) {
        const Callbacks& c = callbacksOf(client);
        if (!c.isCurrent()) c.makeCurrent();
    });
    auto isCurrent = vtkSmartPointer<vtkCallbackCommand>::New();
    isCurrent->SetClientData(&d->callbacks);
    isCurrent->SetCallback([](vtkObject*, unsigned long, void* client, void* callData) {
        *static_cast<bool*>(callData) = callbacksOf(client).isCurrent();
    });
    auto frame = vtkSmartPointer<vtkCallbackCommand>::New();
    frame->SetClientData(&d->callbacks);
    frame->SetCallback([](vtkObject*, unsigned long, void*, void*) {});
    d->window->AddObserver(vtkCommand::WindowMakeCurrentEvent, makeCurrent);
    d->window->AddObserver(vtkCommand::WindowIsCurrentEvent, isCurrent);
    d->window->AddObserver(vtkCommand::WindowFrameEvent, frame);
    d->observers = {makeCurrent, isCurrent, frame};

    // Volume rendering.
    d->volumeProperty->SetColor(d->colours);
    d->volumeProperty->SetScalarOpacity(d->opacity);
    d->volumeProperty->SetInterpolationTypeToLinear();
    d->volumeProperty->ShadeOff();
    d->volumeMapper->SetInputData(d->image);
    d->volumeMapper->SetBlendModeToComposite();
    d->volume->SetMapper(d->volumeMapper);
    d->volume->SetProperty(d->volumeProperty);
    d->renderer->AddVolume(d->volume);

    // Three orthogonal planes through the volume.
    for (int axis = 0; axis < 3; ++axis) {
        d->planeMappers[axis] = vtkSmartPointer<vtkImageSliceMapper>::New();
        d->planeMappers[axis]->SetInputData(d->image);
        d->planeMappers[axis]->SetOrientation(axis);
        d->planes[axis] = vtkSmartPointer<vtkImageSlice>::New();
        d->planes[axis]->SetMapper(d->planeMappers[axis]);
        d->planes[axis]->GetProperty()->SetLookupTable(d->lut);
        d->planes[axis]->GetProperty()->UseLookupTableScalarRangeOn();
        d->planes[axis]->GetProperty()->SetInterpolationTypeToLinear();
        d->renderer->AddViewProp(d->planes[axis]);
    }

    d->outlineMapper->SetInputConnection(d->outline->GetOutputPort());
    d->outlineActor->SetMapper(d->outlineMapper);
    d->outlineActor->GetProperty()->SetColor(0.85, 0.85, 0.85);
    d->renderer->AddActor(d->outlineActor);

    // Labelled axes along the box, in detector pixels.
    d->axes->SetCamera(d->renderer->GetActiveCamera());
    d->axes->SetXTitle("x (px)");
    d->axes->SetYTitle("y (px)");
    d->axes->SetZTitle("row (px)");
    d->axes->SetFlyModeToOuterEdges();
    d->axes->SetGridLineLocation(vtkCubeAxesActor::VTK_GRID_LINES_FURTHEST);
    // Smaller text than VTK's 10 "screen units", set further from the axis: the
    // labels of a 128-voxel axis ran into each other ("100120").
    d->axes->SetScreenSize(7.0);
    d->axes->SetLabelOffset(12.0);
    for (int i = 0; i < 3; ++i) {
        d->axes->GetTitleTextProperty(i)->SetColor(0.85, 0.85, 0.85);
        d->axes->GetLabelTextProperty(i)->SetColor(0.75, 0.75, 0.75);
    }
    d->axes->GetXAxesLinesProperty()->SetColor(0.6, 0.6, 0.6);
    d->axes->GetYAxesLinesProperty()->SetColor(0.6, 0.6, 0.6);
    d->axes->GetZAxesLinesProperty()->SetColor(0.6, 0.6, 0.6);
    d->renderer->AddActor(d->axes);
    d->updateVisibility();
}

VtkScene::~VtkScene() {
    if (d->initialized) d->window->Finalize(); // releases GL resources (context made current by the observer)
    for (auto& o : d->observers) d->window->RemoveObserver(o);
}

void VtkScene::initialize(int width, int height) {
    d->window->SetReadyForRendering(true);
    d->window->SetOwnContext(0);
    d->window->SetMapped(1);
    d->window->SetSize(width, height);
    d->interactor->UpdateSize(width, height);
    d->window->OpenGLInitContext();
    d->initialized = true;
}

void VtkScene::resize(int width, int height) {
    d->window->SetSize(width, height);
    d->interactor->UpdateSize(width, height);
}

void VtkScene::paint(unsigned framebuffer, int width, int height) {
    if (!d->initialized) return;
    vtkOpenGLState* state = d->window->GetState();
    state->Reset();
    state->Push();
    state->vtkglDisable(GL_SCISSOR_TEST);
    d->window->Render();
    state->Pop();

    // Blit VTK's framebuffer into the widget's, then force alpha to 1 (VTK
    // leaves it 0 and the widget would look transparent).
    state->PushFramebufferBindings();
    state->vtkglBindFramebuffer(GL_DRAW_FRAMEBUFFER, framebuffer);
    state->vtkglDrawBuffer(GL_COLOR_ATTACHMENT0);
    state->vtkglViewport(0, 0, width, height);
    state->vtkglScissor(0, 0, width, height);
    const int* size = d->window->GetSize();
    d->window->BlitDisplayFramebuffer(0, 0, 0, size[0], size[1], 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_LINEAR);
    state->vtkglColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
    state->vtkglClearColor(0.0, 0.0, 0.0, 1.0);
    state->vtkglClear(GL_COLOR_BUFFER_BIT);
    state->vtkglColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    state->PopFramebufferBindings();
}

void VtkScene::setVolume(const float* data, int width, int height, int depth, double spacingXY, double spacingZ) {
    vtkNew<vtkFloatArray> values;
    const vtkIdType n = static_cast<vtkIdType>(width) * height * depth;
    values->SetNumberOfTuples(n);
    std::memcpy(values->GetPointer(0), data, static_cast<std::size_t>(n) * sizeof(float));
    d->image->SetDimensions(width, height, depth);
    d->image->SetSpacing(spacingXY, spacingXY, spacingZ);
    d->image->SetOrigin(0, 0, 0);
    d->image->GetPointData()->SetScalars(values);
    d->image->Modified();
    d->dims = {width, height, depth};
    d->hasVolume = n > 0;
    d->outline->SetBounds(d->image->GetBounds());
    d->axes->SetBounds(d->image->GetBounds());
    d->volumeProperty->SetScalarOpacityUnitDistance(spacingXY);
    setPlanes(width / 2, height / 2, depth / 2);
    d->updateVisibility();
    resetCamera();
}

void VtkScene::clearVolume() {
    d->hasVolume = false;
    d->updateVisibility();
}


void VtkScene::setTransferFunction(float low, float high, double maxOpacity,
                                   const std::array<std::uint32_t, 256>& table) {
    if (!(high > low)) high = low + 1e-6f;
    auto rgb = [&](int i, double out[3]) {
        const std::uint32_t c = table[static_cast<std::size_t>(std::clamp(i, 0, 255))];
        out[0] = ((c >> 16) & 0xff) / 255.0;
        out[1] = ((c >> 8) & 0xff) / 255.0;
        out[2] = (c & 0xff) / 255.0;
    };
    d->colours->RemoveAllPoints();
    for (int k = 0; k <= 16; ++k) {
        double c[3];
        rgb(k * 255 / 16, c);
        d->colours->AddRGBPoint(low + (high - low) * k / 16.0, c[0], c[1], c[2]);
    }
    // Transparent up to the threshold (background, noise), then a ramp.
    d->opacity->RemoveAllPoints();
    d->opacity->AddPoint(low, 0.0);
    d->opacity->AddPoint(high, std::clamp(maxOpacity, 0.0, 1.0));
    // Planes: values near the threshold (air, background) fade to
    // transparent, so the planes do not hide the volume behind them.
    d->lut->SetNumberOfTableValues(256);
    for (int i = 0; i < 256; ++i) {
        double c[3];
        rgb(i, c);
        d->lut->SetTableValue(i, c[0], c[1], c[2], std::clamp((i - 13) / 26.0, 0.0, 1.0));
    }
    d->lut->SetRange(low, high);
    d->lut->Build();
    for (auto& p : d->planes) p->GetProperty()->Modified();
}

void VtkScene::setShowVolume(bool on) {
    d->showVolume = on;
    d->updateVisibility();
}

void VtkScene::setShowPlanes(bool on) {
    d->showPlanes = on;
    d->updateVisibility();
}

void VtkScene::setPlanes(int x, int y, int z) {
    const int pos[3] = {x, y, z};
    for (int axis = 0; axis < 3; ++axis)
        d->planeMappers[axis]->SetSliceNumber(std::clamp(pos[axis], 0, std::max(0, d->dims[axis] - 1)));
}

void VtkScene::resetCamera() {
    vtkCamera* camera = d->renderer->GetActiveCamera();
    camera->SetFocalPoint(0, 0, 0);
    camera->SetPosition(0, 0, -1); // look along +z, image rows downward like the slice view
    camera->SetViewUp(0, -1, 0);
    d->renderer->ResetCamera();
    camera->Azimuth(35);
    camera->Elevation(-30);
    camera->OrthogonalizeViewUp();
    camera->Dolly(1.05);
    d->renderer->ResetCameraClippingRange();
}

namespace {

unsigned long pressEvent(VtkScene::Button b) {
    return b == VtkScene::Button::Left     ? vtkCommand::LeftButtonPressEvent
           : b == VtkScene::Button::Middle ? vtkCommand::MiddleButtonPressEvent
                                           : vtkCommand::RightButtonPressEvent;
}

unsigned long releaseEvent(VtkScene::Button b) {
    return b == VtkScene::Button::Left     ? vtkCommand::LeftButtonReleaseEvent
           : b == VtkScene::Button::Middle ? vtkCommand::MiddleButtonReleaseEvent
                                           : vtkCommand::RightButtonReleaseEvent;
}

} // namespace

void VtkScene::mousePress(Button b, int x, int y, bool ctrl, bool shift, bool doubleClick) {
    d->interactor->SetEventInformationFlipY(x, y, ctrl, shift, 0, doubleClick ? 1 : 0);
    d->interactor->InvokeEvent(pressEvent(b));
}

void VtkScene::mouseRelease(Button b, int x, int y, bool ctrl, bool shift) {
    d->interactor->SetEventInformationFlipY(x, y, ctrl, shift);
    d->interactor->InvokeEvent(releaseEvent(b));
}

void VtkScene::mouseMove(int x, int y, bool ctrl, bool shift) {
    d->interactor->SetEventInformationFlipY(x, y, ctrl, shift);
    d->interactor->InvokeEvent(vtkCommand::MouseMoveEvent);
}

void VtkScene::wheel(int x, int y, int delta, bool ctrl, bool shift) {
    d->interactor->SetEventInformationFlipY(x, y, ctrl, shift);
    d->interactor->InvokeEvent(delta > 0 ? vtkCommand::MouseWheelForwardEvent : vtkCommand::MouseWheelBackwardEvent);
}

} // namespace tomo::ui
