# frozen_string_literal: true

require 'json'
require 'zlib'

module CloneArmyBench
  # BENCH=checkin's raw data, as it writes it while it runs (into
  # bench/results/<stamp>.raw/) and as its figures read it back:
  #
  # - runs: the watcher's lines (Readings.watched_runs), the helper's judgement of
  #   each clone's last run, read every WATCH_EVERY s;
  # - times: "<apply start> <all clones running> <figures made>" (epoch seconds;
  #   the last once the run has made its figures, as of which they are made again);
  # - cpu: "<epoch> <name>=<usage_usec> ..." a sample (inside.sh cpu-split);
  # - timeline.jsonl.gz: the recorder's timeline (`clone-army record`).
  #
  # Every file is read as far as it is whole: a line still being written (no
  # newline yet) waits for the next look, and a missing file is no data.
  module CheckinRaw
    # run_report words under which the helper judged a run on its summary alone.
    UNJUDGED = ['earlier-run', 'not-read-yet', '-'].freeze

    Run = Struct.new(:name, :ended, :succeeded, :total, :report, :kinds) do
      def started
        ended - total
      end

      # Judged with the run's own report (or knowing the agent writes none).
      def judged?
        !UNJUDGED.include?(report)
      end

      # A check-in: succeeded in the helper's judgement, with its own report read
      # (one judged on its summary alone could have applied a cached catalog).
      def ok?
        succeeded && judged?
      end

      # Final: judged, or failed (a failed run is failed whatever its report says).
      def final?
        judged? || !succeeded
      end

      # Why it is not a check-in, as the figures' notes count it.
      def failure_kinds
        return [] if ok?
        return ['unjudged'] if succeeded

        kinds.empty? ? ['other'] : kinds
      end
    end

    Raw = Struct.new(:runs, :times, :cpu, :timeline, keyword_init: true)

    module_function

    # The raw data kept in dir (<stamp>.raw/).
    def read(dir)
      text = ->(name) { kept(dir, name) || '' }
      Raw.new(runs: text.call('runs'), times: text.call('times'), cpu: text.call('cpu'),
              timeline: gunzip(File.join(dir, 'timeline.jsonl.gz')))
    end

    # The file `name` in dir as written, or as committed compressed (`name.gz`); nil
    # when neither is there.
    def kept(dir, name)
      path = File.join(dir, name)
      return File.read(path) if File.file?(path)

      File.file?("#{path}.gz") ? gunzip("#{path}.gz") : nil
    end

    def gunzip(path)
      File.file?(path) ? Zlib::GzipReader.open(path, &:read) : ''
    rescue Zlib::Error
      ''
    end

    def whole_lines(text)
      text.each_line.select { |l| l.end_with?("\n") }.map(&:split).reject(&:empty?)
    end

    # The distinct runs in the order they ended: the readings of one (clone, end)
    # folded into the last one that judged it for good, or else the last one.
    def runs(text)
      by_run = {}
      whole_lines(text).each do |words|
        run = run_of(words)
        key = [run.name, run.ended]
        by_run[key] = run if by_run[key].nil? || run.judged? || !by_run[key].judged?
      end
      by_run.values.sort_by { |r| [r.ended, r.name] }
    end

    # "<clone> <end> <succeeded> <total> <status> <run_report> <kinds>" (older
    # watcher lines stop after the total: unjudged).
    def run_of(words)
      name, ended, succeeded, total, _status, report, kinds = words
      Run.new(name, Float(ended), succeeded == 'true', Float(total || 0), report || '-',
              kinds.nil? || kinds == '-' ? [] : kinds.split(','))
    end

    # When the run made its figures, or nil while it runs.
    def figures_at(text)
      word = text.split[2]
      word && Float(word)
    end

    # [apply_t0, fleet_t0], each nil until written.
    def times(text)
      words = text.split
      [words[0] && Float(words[0]), words[1] && Float(words[1])]
    end

    # [[epoch, { name => usec }], ...] in time order; a line that does not read is left out.
    def cpu(text)
      whole_lines(text).filter_map { |t, *pairs| cpu_sample(t, pairs) }.sort_by(&:first)
    end

    def cpu_sample(epoch, pairs)
      [Float(epoch), pairs.to_h { |p| p.split('=', 2) }.transform_values { |v| Integer(v, 10) }]
    rescue ArgumentError, TypeError
      nil
    end

    # The timeline's samples (JSON objects with a time); anything else is left out.
    def timeline(text)
      text.each_line.filter_map do |line|
        doc = JSON.parse(line)
        doc if doc.is_a?(Hash) && doc['t'].is_a?(Numeric)
      rescue JSON::ParserError
        nil
      end
    end
  end
end
