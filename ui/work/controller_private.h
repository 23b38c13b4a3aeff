// What the controller's source files share, and no other file: the
// dataset's source, the requests waiting for the preview thread, and the
// hop to the UI thread. The controller is split by what it runs:
// controller.cpp (its threads, opening datasets), controller_slices.cpp
// (the live slice, references, comparisons, the axis finder, the Data
// panel's views: the preview thread), controller_jobs.cpp (the long jobs
// on the job thread: export, range estimate, axis sweep, 3D sub-volume,
// mode comparison), controller_iterative.cpp (iterative slices' progress,
// the reprojection).
#pragma once

#include "work/controller.h"
#include "work/latency_probe.h"

#include <QElapsedTimer>

#include <optional>
#include <utility>

namespace tomo::ui {

struct Controller::Source {
    QString path;
    tomo::OpenOptions options;
    std::shared_ptr<tomo::DatasetReader> shared; // thread-safe (memory) reader, else null
    std::optional<DemoSpec> demo;
};

struct Controller::Pending {
    struct Reference {
        ReferenceKind kind;
        SliceParams params;
        tomo::ReconOptions options;
    };
    std::optional<std::pair<quint64, SliceParams>> slice;
    int sliceGeneration = 0;
    QElapsedTimer sliceRequested; // when `slice` was asked for
    bool comparison = false;
    std::optional<Reference> reference;
    int referenceGeneration = 0;
};

template <typename Task>
void Controller::toUi(const char* what, Task&& task) {
    QMetaObject::invokeMethod(
        this,
        [what, task = std::forward<Task>(task)]() mutable {
            noteUiActivity(what);
            task();
        },
        Qt::QueuedConnection);
}

} // namespace tomo::ui
