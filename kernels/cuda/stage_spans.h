// Busy time of a CUDA plan's stages (upload, filter, back-projection,
// download): timing events recorded around each piece of work on its
// stage's stream, plus the host time a stage spends (staging copies), summed
// per stage when collected. Shared by TexturePlan and GridrecPlan.
#pragma once

#include "cuda_resources.h"

#include "tomo/backend.h"

#include <vector>

namespace tomo::cuda {

class StageSpans {
public:
    enum Stage { kUpload, kFilter, kBackproject, kDownload, kStages };

    /// Forgets the spans and host times of the last call (the events are reused).
    void reset();
    /// Records the start of a piece of `stage`'s work on `stream`; returns its span.
    int begin(Stage stage, cudaStream_t stream);
    /// Records the end of `span` on `stream`.
    void end(int span, cudaStream_t stream);
    /// Host seconds spent for `stage` (added to its busy time).
    void addHost(Stage stage, double seconds) { m_hostSeconds[stage] += seconds; }
    /// Waits for the spans' ends, then replaces in `times` the stages that
    /// had spans since reset() (the others keep an earlier call's values);
    /// `compute` = the union of the filter and back-projection spans (on a
    /// GPU they overlap). Throws DeviceError.
    void collect(StageTimes& times);

private:
    struct Span {
        Stage stage;
        cudaEvent_t begin, end;
    };
    std::vector<Event> m_events;
    std::size_t m_nextEvent = 0;
    std::vector<Span> m_spans;
    double m_hostSeconds[kStages] = {};
};

} // namespace tomo::cuda
