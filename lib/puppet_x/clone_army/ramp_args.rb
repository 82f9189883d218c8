# frozen_string_literal: true

require_relative 'record_dir'
require_relative 'schema'
require_relative 'task_io'

module PuppetX
  module CloneArmy
    # The clone_army::ramp task's parameters, as `clone-army ramp run` takes
    # them: which there are (tasks/ramp.json declares the same), what each must
    # be, the flag each becomes, and the files the ramp writes in the
    # recorder's directory (RecordDir).
    #
    # The helper holds every figure to its own ranges (a bound's, the hold's
    # against the interval) and refuses before it starts anything, naming the
    # flag; this holds each parameter to its type, and keeps the caller's
    # files in the recorder's directory. The views of the server and PuppetDB
    # are checked as the report task checks them (Task.view_args).
    module RampArgs
      # Each parameter with the flag it becomes and what it must be (KINDS).
      FLAGS = {
        'step' => ['--step', :positive_integer],
        'settle' => ['--settle', :whole_number],
        'hold' => ['--hold', :positive_integer],
        'repeat' => ['--repeat', :repeat],
        'max_clones' => ['--max-clones', :positive_integer],
        'resolution' => ['--resolution', :resolution],
        'label' => ['--label', :label],
        'max_p95' => ['--max-p95', :number],
        'max_error_rate' => ['--max-error-rate', :number],
        'max_jruby_wait' => ['--max-jruby-wait', :number],
        'min_throughput' => ['--min-throughput', :number],
        'max_borrow_timeouts' => ['--max-borrow-timeouts', :whole_number],
        'max_queue_limit_hits' => ['--max-queue-limit-hits', :whole_number],
        'max_puppetdb_queue' => ['--max-puppetdb-queue', :number],
      }.freeze
      # The views a ramp asks of the server and PuppetDB, as the report task
      # takes them.
      VIEWS = ['server', 'puppetdb', 'ca_cert', 'client_cert', 'client_key'].freeze
      # Every parameter the task takes. Any other is refused: a ramp runs for
      # hours, and a misspelt bound left out would run it without that bound.
      PARAMS = (['baseline', 'timeline', 'interval'] + FLAGS.keys + VIEWS).freeze
      # The clones' run interval, of which a ramp's steps are whole multiples:
      # the class's runinterval, its range and its default.
      RUNINTERVAL = Schema.range(:runinterval)
      RUNINTERVAL_DEFAULT = Schema.default(:runinterval)
      # The windows a step may repeat.
      REPEAT = Range.new(*Schema.fetch('ramp', 'repeat').values_at('min', 'max'))
      # `--resolution`: clones (5) or a share of the level (10%); the helper
      # holds either to its range.
      RESOLUTION = %r{\A([1-9][0-9]{0,8}|[0-9]{1,2}(\.[0-9]{1,6})?%)\z}.freeze
      # A ramp's label, for people and comparisons: one line, bounded.
      LABEL = %r{\A[^[:cntrl:]]{1,200}\z}.freeze
      # What each kind of parameter must be: a test of the value, and its words.
      KINDS = {
        positive_integer: [->(v) { v.is_a?(Integer) && v.positive? }, 'a positive integer'],
        whole_number: [->(v) { v.is_a?(Integer) && !v.negative? }, 'a whole number, 0 or more'],
        repeat: [->(v) { v.is_a?(Integer) && REPEAT.cover?(v) }, "a whole number from #{REPEAT.min} to #{REPEAT.max}"],
        interval: [->(v) { v.is_a?(Integer) && RUNINTERVAL.cover?(v) }, "seconds from #{RUNINTERVAL.min} to #{RUNINTERVAL.max}"],
        number: [->(v) { v.is_a?(Numeric) && v.to_f.finite? }, 'a number'],
        resolution: [->(v) { (v.is_a?(String) || v.is_a?(Integer)) && RESOLUTION.match?(v.to_s) },
                     'clones (e.g. 5) or a share of the level (e.g. "10%")'],
        label: [->(v) { v.is_a?(String) && LABEL.match?(v) }, 'one line of 1 to 200 characters'],
      }.freeze
      # The files a ramp writes, and the ends of their names.
      FILES = { 'baseline' => '.json', 'timeline' => '.jsonl' }.freeze
      # The default names: ramp-<UTC time>.json and .jsonl.
      DEFAULT_STEM = 'ramp-%Y%m%dT%H%M%SZ'

      module_function

      # clone-army ramp run --output BASELINE --timeline TIMELINE --interval S --step N
      #                    [--settle S] [--hold S] [--repeat N] [--max-clones N] [--resolution R]
      #                    [--label TEXT] [bounds] [views]
      # The interval is always given (the clones' default runinterval when left
      # out), so that the ramp steps in whole intervals of the clones' runs
      # whatever the helper's own default, and the longest it can take, which
      # the helper reads from the same argv (CallLimits.ramp_seconds), is of
      # that interval.
      def argv(params, now = Time.now)
        unknown = params.keys.reject { |key| PARAMS.include?(key) }.min
        raise TaskIO::ParameterError.new(unknown, "clone_army::ramp takes no #{unknown}; it takes #{PARAMS.join(', ')}") if unknown
        raise TaskIO::ParameterError.new('step', 'step is required: the clones a step starts, e.g. 25') unless Task.given?(params, 'step')

        interval = Task.given?(params, 'interval') ? value(params, 'interval', :interval) : RUNINTERVAL_DEFAULT
        flags = FLAGS.select { |key, _| Task.given?(params, key) }.flat_map { |key, (flag, kind)| [flag, value(params, key, kind).to_s] }
        baseline, timeline = files(params, now)
        ['ramp', 'run', '--output', baseline, '--timeline', timeline, '--interval', interval.to_s, *flags, *Task.view_args(params)]
      end

      # The parameter `key`, once it is of `kind` (KINDS).
      def value(params, key, kind)
        good, what = KINDS.fetch(kind)
        Task.check(key, params[key], good.call(params[key]), what)
      end

      # [baseline, timeline]: new files in the recorder's directory, each by
      # default the other's name with its own ending, or both ramp-<UTC time>.
      def files(params, now)
        dir = RecordDir.path
        given = FILES.select { |key, _| Task.given?(params, key) }
        paths = given.to_h { |key, suffix| [key, new_file(params[key], key, dir, suffix)] }
        stem = given.map { |key, suffix| File.basename(paths[key], suffix) }.first || now.utc.strftime(DEFAULT_STEM)
        FILES.map { |key, suffix| paths[key] || new_file("#{stem}#{suffix}", key, dir, suffix) }
      end

      # A file of the recorder's directory that is not there yet: a ramp writes
      # its own, and replaces no earlier ramp's nor the recorder's timeline.
      def new_file(value, key, dir, suffix)
        path = RecordDir.entry(value, key, dir, suffix)
        return path unless File.exist?(path)

        raise TaskIO::ParameterError.new(key, "#{key} #{path} is there already: a ramp writes new files; give another name")
      end
    end
  end
end
