# frozen_string_literal: true

require_relative 'results'

module CloneArmyBench
  # The server's view of a span of a run, from the recorder's timeline
  # (`clone-army record`'s samples: their server_window and puppetdb_window are
  # the differences of the server's and PuppetDB's own counts over each sample).
  module ServerView
    module_function

    # [server_view, server_rejections] figures over span [from, to] (epoch seconds).
    def figures(samples, span)
      inside = samples.select { |s| s['t'] >= span[0] && s['t'] <= span[1] }
      none = inside.empty?
      rejected = sum(inside, 'server_window', 'jruby', 'borrow_timeouts') +
                 sum(inside, 'server_window', 'jruby', 'queue_limit_hits')
      [Results.figure(key: 'server_view', label: "the server's compiles (the recorder's view)",
                      value: none ? nil : sum(inside, 'server_window', 'compiles'), unit: 'compiles',
                      target: '–', met: nil, note: note(inside)),
       Results.figure(key: 'server_rejections', label: "the server's 503s: JRuby borrow timeouts and queue-limit hits",
                      value: none ? nil : rejected, unit: 'requests', target: '–', met: nil,
                      note: 'each a request the server refused')]
    end

    def note(inside)
      "#{inside.size} samples; #{sum(inside, 'server_window', 'requests')} requests; " \
        "JRuby queue at most #{max(inside, 'server_window', 'jruby', 'queued')}, " \
        "wait at most #{max(inside, 'server_window', 'jruby', 'recent_wait_ms')} ms; " \
        "GC at most #{max(inside, 'server_window', 'jvm', 'gc_share')} of a window; " \
        "PuppetDB #{sum(inside, 'puppetdb_window', 'processed')} commands, queue at most " \
        "#{max(inside, 'puppetdb_window', 'queue_depth')}; the recorder's runs #{sum(inside, 'runs', 'count')}, " \
        "failed: #{failed_by_kind(inside)}"
    end

    def numbers(inside, path)
      inside.map { |s| s.dig(*path) }.grep(Numeric)
    end

    def sum(inside, *path)
      numbers(inside, path).sum
    end

    def max(inside, *path)
      numbers(inside, path).max || '?'
    end

    def failed_by_kind(inside)
      kinds = Hash.new(0)
      inside.each do |s|
        by_kind = s.dig('runs', 'failed_by_kind')
        by_kind.each { |kind, n| kinds[kind] += n if n.is_a?(Integer) } if by_kind.is_a?(Hash)
      end
      kinds.empty? ? 'none' : kinds.sort.map { |k, n| "#{k} #{n}" }.join(', ')
    end
  end
end
