#include "stage_spans.h"

#include <algorithm>
#include <utility>

namespace tomo::cuda {

void StageSpans::reset() {
    m_spans.clear();
    m_nextEvent = 0;
    for (double& s : m_hostSeconds) s = 0.0;
}

int StageSpans::begin(Stage stage, cudaStream_t stream) {
    while (m_events.size() < m_nextEvent + 2) m_events.push_back(Event::create(true));
    Span span{stage, m_events[m_nextEvent].get(), m_events[m_nextEvent + 1].get()};
    m_nextEvent += 2;
    TOMO_CUDA_CHECK(cudaEventRecord(span.begin, stream));
    m_spans.push_back(span);
    return static_cast<int>(m_spans.size()) - 1;
}

void StageSpans::end(int span, cudaStream_t stream) {
    TOMO_CUDA_CHECK(cudaEventRecord(m_spans[static_cast<std::size_t>(span)].end, stream));
}

void StageSpans::collect(StageTimes& times) {
    double seconds[kStages] = {};
    for (const Span& s : m_spans) {
        TOMO_CUDA_CHECK(cudaEventSynchronize(s.end));
        float ms = 0.0f;
        TOMO_CUDA_CHECK(cudaEventElapsedTime(&ms, s.begin, s.end));
        seconds[s.stage] += ms * 1e-3;
    }
    for (int i = 0; i < kStages; ++i) seconds[i] += m_hostSeconds[i];
    // The union of the filter and back-projection spans, on the timeline of
    // the first span (every later span waits for it, in stream order).
    std::vector<std::pair<float, float>> computing;
    for (const Span& s : m_spans) {
        if (s.stage != kFilter && s.stage != kBackproject) continue;
        float begin = 0.0f, end = 0.0f;
        TOMO_CUDA_CHECK(cudaEventElapsedTime(&begin, m_spans.front().begin, s.begin));
        TOMO_CUDA_CHECK(cudaEventElapsedTime(&end, m_spans.front().begin, s.end));
        computing.emplace_back(begin, end);
    }
    std::sort(computing.begin(), computing.end());
    double computeMs = 0.0, reached = -1e30;
    for (const auto& [begin, end] : computing) {
        computeMs += std::max(0.0, end - std::max<double>(begin, reached));
        reached = std::max<double>(reached, end);
    }
    // Only the stages this call ran are replaced.
    bool ran[kStages] = {};
    for (const Span& s : m_spans) ran[s.stage] = true;
    if (ran[kUpload]) times.upload = seconds[kUpload];
    if (ran[kFilter]) times.filter = seconds[kFilter];
    if (ran[kBackproject]) times.backproject = seconds[kBackproject];
    if (ran[kDownload]) times.download = seconds[kDownload];
    if (ran[kFilter] || ran[kBackproject]) times.compute = computeMs * 1e-3;
}

} // namespace tomo::cuda
